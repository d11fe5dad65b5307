package batch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

// Statuses a result line has besides a run's own (completed, max_steps, …).
const (
	// StatusInvalid is a task line that could not be run.
	StatusInvalid = "invalid"
	// StatusError is a task whose run could not be built (its settings).
	StatusError = "error"
	// StatusPending is a task whose run waits in a provider's batch (ask
	// batch --no-wait): not done, so a rerun runs it; ask batch --resume
	// writes its final line after.
	StatusPending = "pending"
	// StatusUnstarted is what Exec returns for a task it did not start
	// (the batch was left pending first): no result line is written, and
	// Config.OnUnstarted is told.
	StatusUnstarted = "unstarted"
)

// Result is one task's result line.
type Result struct {
	ID string `json:"id"`
	// Line is the task's line, for a line that could not be read; it names
	// the line a rerun skips when it had no id.
	Line       int              `json:"line,omitempty"`
	RunID      string           `json:"run_id"`
	Status     string           `json:"status"`
	ExitCode   int              `json:"exit_code"`
	Answer     string           `json:"answer"`
	Value      json.RawMessage  `json:"value,omitempty"`
	Usage      *providers.Usage `json:"usage,omitempty"`
	Cost       *float64         `json:"cost,omitempty"`
	DurationMS int64            `json:"duration_ms"`
	Error      string           `json:"error,omitempty"`
	// Worktree is the git worktree the task's run changed and kept
	// (ask batch --worktree): its path, branch and base.
	Worktree *records.Worktree `json:"worktree,omitempty"`
}

// Answered reports whether the task's run completed.
func (r Result) Answered() bool { return r.ExitCode == 0 && r.Status == "completed" }

// Encode is the result as one line, newline included.
func (r Result) Encode() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(r) // a Result always encodes: its Value is checked JSON
	return b.Bytes()
}

// Sink writes result lines: each with one write, so that lines of workers
// never mix and a kill never leaves half of one. A file is synced before
// Write returns, so that a line the next run reads stays read after a
// crash of the machine too; the workers that write while a sync is under
// way share the next one (a group commit), so that syncs do not bound the
// rate of results.
type Sink struct {
	mu      sync.Mutex
	w       io.Writer
	written int64 // lines written

	syncMu sync.Mutex
	synced int64 // lines the last sync covered
	sync   func() error
}

// NewSink writes to w; sync, when set, makes the lines written durable.
func NewSink(w io.Writer, sync func() error) *Sink { return &Sink{w: w, sync: sync} }

// Write writes r's line.
func (s *Sink) Write(r Result) error {
	line := r.Encode()
	s.mu.Lock()
	_, err := s.w.Write(line)
	s.written++
	mine := s.written
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("write a result: %w", err)
	}
	if s.sync == nil {
		return nil
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if s.synced >= mine {
		return nil // a sync that began after this line covered it
	}
	s.mu.Lock()
	covers := s.written
	s.mu.Unlock()
	if err := s.sync(); err != nil {
		return fmt.Errorf("sync the results: %w", err)
	}
	s.synced = covers
	return nil
}

// Done is what an output file already holds: the tasks a rerun skips.
type Done struct {
	ids   map[string]struct{}
	lines map[int]struct{} // lines without an id reported already
	// Code is the highest exit code of the results there.
	Code int
	// Count and Failed count the results there, and those not answered.
	Count, Failed int
}

// HasID reports whether the task id has its result.
func (d *Done) HasID(id string) bool {
	if d == nil {
		return false
	}
	_, ok := d.ids[id]
	return ok
}

// HasLine reports whether the line without an id was reported.
func (d *Done) HasLine(line int) bool {
	if d == nil {
		return false
	}
	_, ok := d.lines[line]
	return ok
}

func (d *Done) add(r Result) {
	if r.Status == StatusPending {
		return // its final line follows, or a rerun runs it
	}
	switch {
	case r.ID != "":
		d.ids[r.ID] = struct{}{}
	case r.Line > 0:
		d.lines[r.Line] = struct{}{}
	}
	d.Count++
	if !r.Answered() {
		d.Failed++
	}
	d.Code = max(d.Code, r.ExitCode)
}

// Output is the --output file, open for appending, locked against a
// second batch writing it.
type Output struct {
	File *os.File
	Done *Done
}

// OpenOutput opens (or creates) the results file at path and reads the
// results it holds. A last line without its newline, or that is not a
// result, is what a crash of the machine (not of ask: each line is one
// write) can leave; it is cut off, and its task runs again.
func OpenOutput(path string) (*Output, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--output: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("--output %s: another ask batch is writing it", path)
		}
		return nil, fmt.Errorf("--output %s: lock: %w", path, err)
	}
	done, keep, err := ReadDone(f)
	if err == nil {
		var info os.FileInfo
		if info, err = f.Stat(); err == nil && keep < info.Size() {
			err = f.Truncate(keep)
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("--output %s: %w", path, err)
	}
	return &Output{File: f, Done: done}, nil
}

// Sink is the file's sink: one append a line, synced.
func (o *Output) Sink() *Sink { return NewSink(o.File, o.File.Sync) }

// Close releases the file and its lock.
func (o *Output) Close() error { return o.File.Close() }

// ReadDone reads result lines from r. keep is the length of the whole
// lines that are results: what follows (a torn last line) is to be cut.
// A line that is not a result before the last is an error: the file is
// not ask's.
func ReadDone(r io.Reader) (done *Done, keep int64, err error) {
	done = &Done{ids: map[string]struct{}{}, lines: map[int]struct{}{}}
	br := bufio.NewReaderSize(r, 64<<10)
	var pending error // a bad line, an error unless it is the last
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return done, keep, pending
		}
		if err != nil && err != io.EOF {
			return nil, 0, err
		}
		if pending != nil {
			return nil, 0, pending
		}
		var res Result
		whole := err == nil
		if !whole || json.Unmarshal(line, &res) != nil || res.ID == "" && res.Line == 0 {
			pending = fmt.Errorf("line %s is not a result line of ask batch", strconv.Itoa(n))
			if !whole {
				return done, keep, nil // torn by a crash: cut it
			}
			continue
		}
		done.add(res)
		keep += int64(len(line))
	}
}

// ParseResultLine reads one result line.
func ParseResultLine(line []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(line, &r); err != nil {
		return Result{}, fmt.Errorf("not a result line: %w", err)
	}
	return r, nil
}
