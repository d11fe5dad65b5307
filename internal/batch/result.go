package batch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

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

// Encode is the result as one line, newline included, with every key of
// a result line: null where it is empty, so that a reader (jq) finds the
// same keys on every line.
func (r Result) Encode() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(wireResult{ // a Result always encodes: its Value is checked JSON
		ID: orNull(r.ID), Line: r.Line, RunID: orNull(r.RunID), Status: r.Status, ExitCode: r.ExitCode,
		Answer: orNull(r.Answer), Value: r.Value, Usage: r.Usage, Cost: r.Cost, DurationMS: r.DurationMS, Error: orNull(r.Error),
	})
	return b.Bytes()
}

// wireResult is a result line as written: the ten keys always, line where
// it names a line without an id.
type wireResult struct {
	ID         *string          `json:"id"`
	Line       int              `json:"line,omitempty"`
	RunID      *string          `json:"run_id"`
	Status     string           `json:"status"`
	ExitCode   int              `json:"exit_code"`
	Answer     *string          `json:"answer"`
	Value      json.RawMessage  `json:"value"`
	Usage      *providers.Usage `json:"usage"`
	Cost       *float64         `json:"cost"`
	DurationMS int64            `json:"duration_ms"`
	Error      *string          `json:"error"`
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
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

// ParseResultLine reads one result line.
func ParseResultLine(line []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(line, &r); err != nil {
		return Result{}, fmt.Errorf("not a result line: %w", err)
	}
	return r, nil
}
