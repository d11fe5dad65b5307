package loop_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/records"
)

// stuckTools ignore their context: a call blocks until the test ends (a
// read blocked in the kernel, a server that never answers).
type stuckTools struct{ release chan struct{} }

func (s stuckTools) Call(context.Context, string, string) (string, bool) {
	select {
	case <-s.release:
	case <-time.After(time.Minute):
	}
	return "too late", false
}

// A tool that ignores cancellation does not keep the run past its
// timeout: after a short grace its call is answered with an error and the
// run ends with a result.
func TestTimeoutEndsRunDespiteStuckTool(t *testing.T) {
	box := stuckTools{release: make(chan struct{})}
	defer close(box.release)
	ctx, cancel := context.WithTimeoutCause(context.Background(), 200*time.Millisecond, loop.ErrTimeout)
	defer cancel()
	start := time.Now()
	r := runLoop(t, ctx, box, loop.Config{ToolGrace: 100 * time.Millisecond},
		calls(call("c1", "read_file", `{"path":"a"}`), call("c2", "read_file", `{"path":"b"}`)), text("never"))
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the run took %s after a 200ms timeout", took)
	}
	if r.res.Status != loop.StatusTimeout || !errors.Is(r.res.Err, loop.ErrTimeout) {
		t.Errorf("status %q err %v, want a timeout", r.res.Status, r.res.Err)
	}
	if len(r.res.Calls) != 2 {
		t.Fatalf("%d calls answered, want 2", len(r.res.Calls))
	}
	for _, c := range r.res.Calls {
		if !c.IsError || !strings.Contains(c.Content, "did not stop within 100ms") {
			t.Errorf("call %s answered %q, want an error saying the tool did not stop", c.ID, c.Content)
		}
	}
	finished := 0
	for _, ev := range r.events {
		if ev.Type == records.TypeToolFinished && ev.IsError {
			finished++
		}
	}
	if finished != 2 {
		t.Errorf("%d tool.finished error events, want 2", finished)
	}
	if last := r.events[len(r.events)-1]; last.Type != records.TypeError {
		t.Errorf("last event %s, want the error that ends the run", last.Type)
	}
}
