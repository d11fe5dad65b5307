package main

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// TestRunSummaryOnlyOnATerminal: the line ends a run whose stderr is a
// terminal, not one whose stderr is a file or a pipe, nor a quiet one;
// -v shows each step's usage wherever stderr goes.
func TestRunSummaryOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	replies := func() []fakeprovider.Reply {
		return []fakeprovider.Reply{
			{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}},
			{Text: "done"},
		}
	}
	// The end-of-run line names the provider and the model, then what the run took.
	const summary = "ask: openai gpt-4o-mini · 2 steps · 200 tokens in, 40 out"
	tests := []struct {
		name      string
		tty       bool
		args      []string
		want      bool
		stepLines bool
	}{
		{"terminal", true, nil, true, false},
		{"not a terminal", false, nil, false, false},
		{"quiet terminal", true, []string{"-q"}, false, false},
		{"--json on a terminal", true, []string{"--json"}, true, false},
		{"verbose, not a terminal", false, []string{"-v"}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(replies()...)
			defer srv.Close()
			r := runAsk(t, askEnv{server: srv, tty: tt.tty, env: map[string]string{"NO_COLOR": "1"}}, append(tt.args, "list it")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := strings.Contains(r.stderr, summary); got != tt.want {
				t.Errorf("summary shown %v, want %v; stderr:\n%s", got, tt.want, r.stderr)
			}
			// On a terminal each finished call leaves its line; -q hides it.
			if got, want := strings.Contains(r.stderr, "· list_directory . ("), tt.want; got != want {
				t.Errorf("the call's line shown %v, want %v; stderr:\n%s", got, want, r.stderr)
			}
			if strings.Contains(r.stdout, "tokens in") {
				t.Errorf("the summary reached stdout: %q", r.stdout)
			}
			if got := strings.Count(r.stderr, "tokens in, 20 out"); tt.stepLines && got != 2 {
				t.Errorf("-v: %d step usage lines, want 2; stderr:\n%s", got, r.stderr)
			}
		})
	}
}
