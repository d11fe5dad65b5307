package loop_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
)

// workTools stands for a repository: "test" answers with the result its
// script gives for that run (the same failure until fixed), "edit" changes
// a file, and a test run listed in changeOn changes a file too (a cache it
// writes).
type workTools struct {
	mu       sync.Mutex
	tests    int
	changes  int
	results  func(n int) string // the n-th test run's output, from 1
	changeOn map[int]bool
}

func (w *workTools) Call(_ context.Context, name, args string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch name {
	case "edit":
		w.changes++
		return "edited " + args, false
	case "test":
		w.tests++
		if w.changeOn[w.tests] {
			w.changes++
		}
		return w.results(w.tests), true
	}
	return "unknown", true
}

func (w *workTools) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changes
}

func sameFailure(int) string { return "exit code: 1\nFAIL TestParse" }

// steps builds a script: each word is a step, "t" a test run, "e" an
// edit (each edit of another line), "a" the answer.
func steps(script string) []fakeprovider.Reply {
	var out []fakeprovider.Reply
	for i, w := range strings.Fields(script) {
		id := fmt.Sprint("c", i)
		switch w {
		case "t":
			out = append(out, calls(call(id, "test", `{"command":"go test ./..."}`)))
		case "e":
			out = append(out, calls(call(id, "edit", fmt.Sprintf(`{"path":"parse.go","line":%d}`, i))))
		case "a":
			out = append(out, text("fixed: the parser now accepts empty input"))
		}
	}
	return out
}

func repeat(s string, n int) string { return strings.Repeat(s+" ", n) }

// The stuck-model guard of DESIGN §5: five steps in a row with the same
// call answered the same way, and no file changed, stop the run; anything
// else is work.
func TestStuckModelGuard(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		script    string
		results   func(int) string
		changeOn  map[int]bool
		maxSteps  int
		want      string
		wantTests int
	}{
		{name: "five identical calls and results in a row stop", script: repeat("t", 5) + "a",
			want: loop.StatusRepeatedCall, wantTests: 5},
		{name: "four in a row do not", script: repeat("t", 4) + "a",
			want: loop.StatusCompleted, wantTests: 4},
		{name: "a test run after each edit is work, for 60 steps and more", script: repeat("t e", 31) + "t a",
			want: loop.StatusCompleted, wantTests: 32},
		{name: "edits between runs of the same test reset the count", script: repeat("t t t t e", 6) + "a",
			want: loop.StatusCompleted, wantTests: 24},
		{name: "a file changed by the call itself resets the count", script: repeat("t", 6) + "a",
			changeOn: map[int]bool{3: true}, want: loop.StatusCompleted, wantTests: 6},
		{name: "after a change, five more in a row stop", script: repeat("t", 8) + "a",
			changeOn: map[int]bool{3: true}, want: loop.StatusRepeatedCall, wantTests: 7},
		{name: "the same call with another result is not stuck", script: repeat("t", 8) + "a",
			results: func(n int) string { return fmt.Sprintf("FAIL: %d tests left", 10-n) },
			want:    loop.StatusCompleted, wantTests: 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			box := &workTools{results: tt.results, changeOn: tt.changeOn}
			if box.results == nil {
				box.results = sameFailure
			}
			r := runLoop(t, context.Background(), box, loop.Config{MaxSteps: tt.maxSteps, Changes: box.count,
				Tools: []providers.Tool{{Name: "test"}, {Name: "edit"}}}, steps(tt.script)...)
			if r.res.Status != tt.want {
				t.Fatalf("status = %q after %d steps (err %v), want %q", r.res.Status, r.res.Steps, r.res.Err, tt.want)
			}
			if box.tests != tt.wantTests {
				t.Errorf("%d test runs, want %d", box.tests, tt.wantTests)
			}
			if tt.want == loop.StatusCompleted && !strings.HasPrefix(r.res.Answer, "fixed") {
				t.Errorf("answer = %q, want the model's answer", r.res.Answer)
			}
			if n := len(r.srv.Requests()); n != r.res.Steps {
				t.Errorf("%d requests for %d steps", n, r.res.Steps)
			}
		})
	}
}

// The last step's results are sent back before the run stops, so that a
// run continued later has every call answered.
func TestStuckRunAnswersEveryCall(t *testing.T) {
	t.Parallel()
	box := &workTools{results: sameFailure}
	r := runLoop(t, context.Background(), box, loop.Config{Tools: []providers.Tool{{Name: "test"}}}, steps(repeat("t", 5)+"a")...)
	if r.res.Status != loop.StatusRepeatedCall {
		t.Fatalf("status = %q", r.res.Status)
	}
	if len(r.res.Calls) != 5 || r.res.Calls[4].Content != sameFailure(5) {
		t.Errorf("calls = %+v, want five, the fifth answered", r.res.Calls)
	}
	last := r.res.History[len(r.res.History)-1]
	if !strings.Contains(string(last), "c4") {
		t.Errorf("history ends with %s, want the fifth call's result", last)
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	// Sixty steps of work must fit in a run started without --max-steps.
	box := &workTools{results: sameFailure}
	r := runLoop(t, context.Background(), box, loop.Config{Changes: box.count, Tools: []providers.Tool{{Name: "test"}, {Name: "edit"}}},
		steps(repeat("t e", 45)+"a")...)
	if r.res.Status != loop.StatusCompleted || r.res.Steps != 91 {
		t.Errorf("status %q after %d steps, want completed after 91", r.res.Status, r.res.Steps)
	}
	if loop.DefaultTimeout.Minutes() != 30 {
		t.Errorf("DefaultTimeout = %s, want 30m", loop.DefaultTimeout)
	}
}

func TestWithTimeout(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		d            string
		wantDeadline bool
	}{{"zero means no limit", "0s", false}, {"a limit sets a deadline", "30m", true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := mustDuration(t, tt.d)
			ctx, cancel := loop.WithTimeout(context.Background(), d)
			defer cancel()
			if ctx.Err() != nil {
				t.Fatalf("context ended at once: %v", context.Cause(ctx))
			}
			if _, ok := ctx.Deadline(); ok != tt.wantDeadline {
				t.Errorf("deadline set = %v, want %v", ok, tt.wantDeadline)
			}
		})
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
