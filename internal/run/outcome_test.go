package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/jsonpos"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/records"
)

// signalled is a stop cause that knows its exit code, as cmd/ask's signals do.
type signalled struct{}

func (signalled) Error() string { return "interrupted by SIGTERM" }
func (signalled) ExitCode() int { return 143 }

// TestOutcome checks the map from how a run ended to its exit code (DESIGN
// §7), which run.finished records.
func TestOutcome(t *testing.T) {
	t.Parallel()
	r := &Run{}
	tests := []struct {
		name string
		res  loop.Result
		code int
	}{
		{"completed", loop.Result{Status: loop.StatusCompleted}, fault.ExitOK},
		{"max steps", loop.Result{Status: loop.StatusMaxSteps}, fault.ExitLimit},
		{"stuck model", loop.Result{Status: loop.StatusRepeatedCall}, fault.ExitLimit},
		{"parse failures", loop.Result{Status: loop.StatusParseFailures}, fault.ExitLimit},
		{"schema failed", loop.Result{Status: loop.StatusSchemaFailed, Err: errors.New("no match")}, fault.ExitLimit},
		{"timeout", loop.Result{Status: loop.StatusTimeout}, fault.ExitTimeout},
		{"interrupted", loop.Result{Status: loop.StatusInterrupted}, fault.ExitInterrupted},
		{"interrupted by a signal", loop.Result{Status: loop.StatusInterrupted, Err: signalled{}}, 143},
		{"denied", loop.Result{Status: loop.StatusDenied}, fault.ExitRefused},
		{"completed with a --safe refusal", loop.Result{Status: loop.StatusCompleted, Refused: true,
			Denials: []records.Denial{{Name: "write_file"}}}, fault.ExitRefused},
		{"a limit with a --safe refusal", loop.Result{Status: loop.StatusMaxSteps, Refused: true}, fault.ExitRefused},
		{"provider error", loop.Result{Status: loop.StatusError, Err: &providers.APIError{StatusCode: 500}}, fault.ExitProvider},
		{"rejected key", loop.Result{Status: loop.StatusError, Err: &providers.APIError{StatusCode: 401}}, fault.ExitAuth},
	}
	for _, tt := range tests {
		if code, _ := r.Outcome(&tt.res); code != tt.code {
			t.Errorf("%s: exit %d, want %d", tt.name, code, tt.code)
		}
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		code int
	}{
		{fault.Usagef("bad flag"), fault.ExitUsage},
		{fmt.Errorf("wrapped: %w", fault.New(fault.Refused, errors.New("x"))), fault.ExitRefused},
		{&jsonpos.Error{}, fault.ExitUsage},
		{&catalog.MissingKeyError{}, fault.ExitAuth},
		{&providers.APIError{StatusCode: 403}, fault.ExitAuth},
		{&providers.APIError{StatusCode: 429}, fault.ExitProvider},
		{fmt.Errorf("stream: %w", providers.ErrStreamCut), fault.ExitProvider},
		{loop.ErrTimeout, fault.ExitTimeout},
		{context.Canceled, fault.ExitInterrupted},
		{signalled{}, 143},
		{errors.New("disk full"), fault.ExitFailure},
	}
	for _, tt := range tests {
		if got := ExitCode(tt.err); got != tt.code {
			t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.code)
		}
	}
}

// The line that says why names the refused calls, counted in words a
// person reads ("1 tool call", never "1 tool call(s)").
func TestWhyCountsRefusals(t *testing.T) {
	t.Parallel()
	r := &Run{}
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{"shell"}, "1 tool call refused by policy: shell"},
		{[]string{"shell", "write_file"}, "2 tool calls refused by policy: shell, write_file"},
	}
	for _, tt := range tests {
		res := loop.Result{Status: loop.StatusDenied, Refused: true}
		for _, n := range tt.names {
			res.Denials = append(res.Denials, records.Denial{Name: n})
		}
		if got := r.Why(&res); got != tt.want {
			t.Errorf("Why = %q, want %q", got, tt.want)
		}
	}
}

// A --safe refusal decides the exit code even when the run then stops at a
// limit: a CI job must see 6 whenever something forbidden was tried, while
// the status still says how the run ended.
func TestSafeRefusalWinsOverALimit(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("s", "shell", `{"command":"rm -rf build"}`)}},
		fakeprovider.Reply{Text: "still working", Calls: []providers.ToolCall{fakeprovider.Call("l", "list_directory", `{}`)}})
	defer srv.Close()
	r := newWorld(t, srv).ask("clean up", "safe", true, "max-steps", 2)
	if r.code != fault.ExitRefused {
		t.Fatalf("exit %d, want %d; stderr %s", r.code, fault.ExitRefused, r.stderr)
	}
	got := r.summary()
	if got.Status != "max_steps" || len(got.Denials) != 1 || got.Denials[0].Name != "shell" {
		t.Errorf("status %q denials %+v, want max_steps with the shell refusal", got.Status, got.Denials)
	}
	if !strings.Contains(r.stderr, "--max-steps 2") || !strings.Contains(r.stderr, "refused by policy: shell") {
		t.Errorf("stderr %q should name both the limit and the refusal", r.stderr)
	}

	// Without --safe the same limit is exit 5.
	srv2 := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("l", "list_directory", `{}`)}},
		fakeprovider.Reply{Text: "still working", Calls: []providers.ToolCall{fakeprovider.Call("m", "search", `{"pattern":"x"}`)}})
	defer srv2.Close()
	if r := newWorld(t, srv2).ask("look", "max-steps", 2); r.code != fault.ExitLimit {
		t.Errorf("exit %d without --safe, want %d; stderr %s", r.code, fault.ExitLimit, r.stderr)
	}
}
