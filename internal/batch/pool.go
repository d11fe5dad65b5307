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
}

// Summary is what a batch came to.
type Summary struct {
	// Results counts the result lines written, Skipped the tasks a rerun
	// found done, Other those of other shards.
	Results, Skipped, Other int
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
	if cfg.Done != nil {
		sum.Code = cfg.Done.Code
	}
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

	readErr := feed(ctx, cfg, tasks, emit, func(skipped, other int) {
		mu.Lock()
		sum.Skipped += skipped
		sum.Other += other
		mu.Unlock()
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

// feed reads the task lines and hands each task of the shard not done to
// the workers; a bad line's result goes out at once.
func feed(ctx context.Context, cfg Config, tasks chan<- Task, emit func(Result), count func(skipped, other int)) error {
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
			switch {
			case !cfg.Shard.Takes(shardKey(id, n)):
				count(0, 1)
			case id != "" && cfg.Done.HasID(id), id == "" && cfg.Done.HasLine(n):
				count(1, 0)
			default:
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
		switch {
		case !cfg.Shard.Takes(t.ID):
			count(0, 1)
		case cfg.Done.HasID(t.ID):
			count(1, 0)
		default:
			select {
			case tasks <- t:
			case <-ctx.Done():
				return nil
			}
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
