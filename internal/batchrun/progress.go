package batchrun

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ask-cli/ask/internal/batch"
)

// Progress is the progress line a terminal shows on stderr: done,
// failed, running, tokens, cost, rate.
type Progress struct {
	w                      io.Writer
	on                     bool
	start                  time.Time
	done, failed, running  atomic.Int64
	tokens                 atomic.Int64
	mu                     sync.Mutex
	wmu                    sync.Mutex // one line at a time on w
	cost                   float64
	costKnown              bool
	tick                   *time.Ticker
	quit                   chan struct{}
	stopOnce               sync.Once
	skipped, skippedFailed atomic.Int64 // tasks a rerun found done
	total                  int          // tasks of the shard, 0 when unknown
	drawn                  bool         // a progress line is on the screen
}

// SetTotal gives the number of tasks the batch has (0: unknown).
func (p *Progress) SetTotal(n int) { p.total = n }

// Above is w with each write put above the progress line, which is drawn
// again after it: result lines on a terminal that shows the progress line
// too never glue onto it.
func (p *Progress) Above(w io.Writer) io.Writer {
	if !p.on {
		return w
	}
	return aboveWriter{p: p, w: w}
}

type aboveWriter struct {
	p *Progress
	w io.Writer
}

func (a aboveWriter) Write(b []byte) (int, error) {
	a.p.wmu.Lock()
	defer a.p.wmu.Unlock()
	if a.p.drawn {
		fmt.Fprint(a.p.w, "\r\x1b[K")
		a.p.drawn = false
	}
	return a.w.Write(b)
}

// NewProgress draws on w when on.
func NewProgress(w io.Writer, on bool) *Progress {
	p := &Progress{w: w, on: on, start: time.Now(), quit: make(chan struct{})}
	if on {
		p.tick = time.NewTicker(250 * time.Millisecond)
		go func() {
			for {
				select {
				case <-p.tick.C:
					p.draw()
				case <-p.quit:
					return
				}
			}
		}()
	}
	return p
}

// Started counts a task as running.
func (p *Progress) Started(batch.Task) { p.running.Add(1) }

// Unstarted takes back a task counted as running that did not start.
func (p *Progress) Unstarted(batch.Task) { p.running.Add(-1) }

// Skipped counts a task a rerun found done.
func (p *Progress) Skipped(failed bool) {
	p.skipped.Add(1)
	if failed {
		p.skippedFailed.Add(1)
	}
}

// Ended counts a task's result.
func (p *Progress) Ended(r batch.Result) {
	if r.Status != batch.StatusInvalid {
		p.running.Add(-1)
	}
	p.done.Add(1)
	if !r.Answered() && r.Status != batch.StatusPending {
		p.failed.Add(1)
	}
	if r.Usage != nil {
		p.tokens.Add(int64(r.Usage.InputTokens + r.Usage.OutputTokens))
	}
	if r.Cost != nil {
		p.mu.Lock()
		p.cost += *r.Cost
		p.costKnown = true
		p.mu.Unlock()
	}
}

// Line is the progress as one line.
func (p *Progress) Line() string {
	done := p.done.Load()
	parts := []string{
		p.doneText(done + p.skipped.Load()),
		fmt.Sprintf("%d failed", p.failed.Load()+p.skippedFailed.Load()),
		fmt.Sprintf("%d running", p.running.Load()),
		fmt.Sprintf("%d tokens", p.tokens.Load()),
	}
	p.mu.Lock()
	if p.costKnown {
		parts = append(parts, fmt.Sprintf("$%.4f", p.cost))
	}
	p.mu.Unlock()
	if secs := time.Since(p.start).Seconds(); secs > 0 {
		parts = append(parts, fmt.Sprintf("%.1f/s", float64(done)/secs))
	}
	return "ask batch: " + strings.Join(parts, " · ")
}

func (p *Progress) doneText(done int64) string {
	if p.total > 0 {
		return fmt.Sprintf("%d/%d done", done, p.total)
	}
	return fmt.Sprintf("%d done", done)
}

// Note writes a line above the progress line.
func (p *Progress) Note(line string) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.on {
		fmt.Fprintf(p.w, "\r\x1b[K%s\n", line)
		p.drawn = false
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *Progress) draw() {
	line := p.Line()
	p.wmu.Lock()
	defer p.wmu.Unlock()
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.drawn = true
}

// Stop ends the line with its last state.
func (p *Progress) Stop() {
	p.stopOnce.Do(func() {
		if !p.on {
			return
		}
		p.tick.Stop()
		close(p.quit)
		p.draw()
		fmt.Fprintln(p.w)
	})
}

// LockedWriter lets many runs write notes to one stream, a line at a time.
type LockedWriter struct {
	mu sync.Mutex
	W  io.Writer
}

func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}
