package batch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// MaxLine is the longest task line read; a longer one is that line's
// error.
const MaxLine = 16 << 20

// Config is a batch to run.
type Config struct {
	// Input holds the task lines; it is read as the workers free up, never
	// whole.
	Input io.Reader
	// J is the most runs at once.
	J     int
	Shard Shard
	// Done are the results a rerun finds; nil for none.
	Done *Done
	// Limiter paces the runs; nil makes one of J.
	Limiter *Limiter
	// Exec runs one task.
	Exec func(ctx context.Context, t Task) Result
	Sink *Sink
	// OnStart and OnResult are told of each task as it starts and ends
	// (the progress line); either may be nil.
	OnStart  func(Task)
	OnResult func(Result)
	// OnUnstarted is told of each task Exec did not start (StatusUnstarted).
	OnUnstarted func(Task)
	// OnAgain is told of each task Done holds that runs again: its line
	// was refused before and reads now (Refix), or it failed (Retry).
	OnAgain func(Task, Verdict)
	// OnSkip is told of each task skipped as done, and whether it failed.
	OnSkip func(failed bool)
}

// Summary is what a batch came to.
type Summary struct {
	// Results counts the result lines written, Skipped the tasks a rerun
	// found done, Other those of other shards; SkippedFailed counts the
	// skipped tasks that did not answer (--retry-failed runs them).
	Results, Skipped, SkippedFailed, Other int
	// SkippedRefused counts the lines refused before that still are.
	SkippedRefused int
	// Again counts the tasks the file held that ran again; FixedLines are
	// the numbers of lines without an id reported before that ran now.
	Again      int
	FixedLines map[int]bool
	// Code is the batch's exit code: 0 when every task answered, else the
	// highest task code, counting the results found done.
	Code int
}

// Run runs the tasks of cfg.Input, cfg.J at once, each result written as
// its task ends. A run that ends because ctx did (an interrupt) leaves no
// result: it runs again on a rerun. The error is the input's or the
// sink's, which end the batch.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	j := max(cfg.J, 1)
	lim := cfg.Limiter
	if lim == nil {
		lim = NewLimiter(j)
	}
	var sum Summary
	var mu sync.Mutex // guards sum
	emit := func(r Result) {
		if err := cfg.Sink.Write(r); err != nil {
			cancel(err)
			return
		}
		mu.Lock()
		sum.Results++
		sum.Code = max(sum.Code, r.ExitCode)
		mu.Unlock()
		if cfg.OnResult != nil {
			cfg.OnResult(r)
		}
	}

	tasks := make(chan Task)
	var wg sync.WaitGroup
	for range j {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range tasks {
				if lim.Acquire(ctx) != nil {
					continue // drain: the batch is ending
				}
				if cfg.OnStart != nil {
					cfg.OnStart(t)
				}
				r := cfg.Exec(ctx, t)
				lim.Release()
				if r.Status == StatusUnstarted {
					if cfg.OnUnstarted != nil {
						cfg.OnUnstarted(t)
					}
					continue
				}
				if ctx.Err() != nil {
					continue // cut short: not a result
				}
				emit(r)
			}
		}()
	}

	readErr := feed(ctx, cfg, tasks, emit, func(f fed) {
		mu.Lock()
		defer mu.Unlock()
		switch f.verdict {
		case Skip, SkipFailed:
			sum.Skipped++
			sum.Code = max(sum.Code, f.code)
			if f.verdict == SkipFailed {
				sum.SkippedFailed++
			}
			if f.refused && f.code != 0 {
				sum.SkippedRefused++
			}
			if cfg.OnSkip != nil {
				cfg.OnSkip(f.code != 0 || f.verdict == SkipFailed)
			}
		case Retry, Refix:
			sum.Again++
		}
		if f.other {
			sum.Other++
		}
		if f.fixedLine > 0 {
			if sum.FixedLines == nil {
				sum.FixedLines = map[int]bool{}
			}
			sum.FixedLines[f.fixedLine] = true
		}
	})
	close(tasks)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return sum, err
	}
	if readErr != nil {
		return sum, readErr
	}
	return sum, context.Cause(ctx)
}

// fed is what feed did with a line, for the summary.
type fed struct {
	verdict   Verdict
	code      int  // the exit code of the result skipped
	other     bool // the line is another shard's
	refused   bool // the line is refused, and was before
	fixedLine int  // a line reported without an id before that runs now
}

// byteOrderMark is what some editors put before a UTF-8 file's first line.
var byteOrderMark = []byte("\xef\xbb\xbf")

// feed reads the task lines and hands each task of the shard not done to
// the workers; a bad line's result goes out at once.
func feed(ctx context.Context, cfg Config, tasks chan<- Task, emit func(Result), count func(fed)) error {
	br := bufio.NewReaderSize(cfg.Input, 64<<10)
	seen := map[string]int{} // id → its line, for ids given twice
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br)
		if err == io.EOF && len(line) == 0 && !tooLong {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("read the tasks: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, byteOrderMark)
		}
		if !tooLong && len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var t Task
		var perr error
		if tooLong {
			perr = &LineError{Line: n, Msg: fmt.Sprintf("longer than %d MiB", MaxLine>>20)}
		} else {
			t, perr = ParseTask(line, n)
		}
		if perr == nil {
			if first, dup := seen[t.ID]; dup {
				perr = &LineError{Line: n, Msg: fmt.Sprintf("id %q is the id of line %d too: give each task its own", t.ID, first)}
			}
		}
		if perr != nil {
			var le *LineError
			errors.As(perr, &le)
			id := le.ID
			if _, dup := seen[id]; dup {
				id = "" // the id names another line's task
			}
			if !cfg.Shard.Takes(shardKey(id, n)) {
				count(fed{other: true})
			} else if had, code := cfg.Done.Refused(id, n); had {
				count(fed{verdict: Skip, code: code, refused: true})
			} else {
				r := Result{ID: id, Status: StatusInvalid, ExitCode: 2, Error: perr.Error()}
				if id == "" {
					r.Line = n
				}
				emit(r)
			}
			if id != "" {
				seen[id] = n
			}
			continue
		}
		seen[t.ID] = n
		if !cfg.Shard.Takes(t.ID) {
			count(fed{other: true})
			continue
		}
		v, code := cfg.Done.Task(t.ID)
		f := fed{verdict: v, code: code}
		if v == Fresh {
			if had, _ := cfg.Done.Refused("", n); had {
				f.verdict, f.fixedLine = Refix, n // reported by its number, it has an id now
			}
		}
		count(f)
		switch f.verdict {
		case Skip, SkipFailed:
			continue
		case Retry, Refix:
			if cfg.OnAgain != nil {
				cfg.OnAgain(t, f.verdict)
			}
		}
		select {
		case tasks <- t:
		case <-ctx.Done():
			return nil
		}
		if err == io.EOF {
			return nil
		}
	}
}

// shardKey is what a line is sharded by: its id, else its line number.
func shardKey(id string, line int) string {
	if id != "" {
		return id
	}
	return "line " + strconv.Itoa(line)
}

// readLine reads one line without its newline; a line past MaxLine is
// skipped to its end and reported as tooLong.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxLine {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			return line, tooLong, err
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, nil
	}
}
