package main

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// TestNarrationIsSeparatedFromTheAnswer: on a terminal stdout every step's
// text streams as it comes, so narration before tool calls must not run
// into the answer, whether stderr is a terminal or not.
func TestNarrationIsSeparatedFromTheAnswer(t *testing.T) {
	t.Parallel()
	call := func(id string) []providers.ToolCall {
		return []providers.ToolCall{{ID: id, Name: "list_directory", Arguments: `{"path":"."}`}}
	}
	tests := []struct {
		name    string
		env     askEnv
		replies []fakeprovider.Reply
		want    string
	}{
		{name: "stdout a terminal, stderr not", env: askEnv{outTTY: true},
			replies: []fakeprovider.Reply{{Text: "Let me look.", Calls: call("c1")}, {Text: "It is empty."}},
			want:    "Let me look.\n\nIt is empty.\n"},
		// On one terminal the status line ends the narration's line on its
		// way below it (stderr), so the answer adds one newline: one blank
		// line on the screen, the call's line in it.
		{name: "both terminals", env: askEnv{tty: true},
			replies: []fakeprovider.Reply{{Text: "Let me look.", Calls: call("c1")}, {Text: "It is empty."}},
			want:    "Let me look.\nIt is empty.\n"},
		{name: "narration ending in a newline", env: askEnv{outTTY: true},
			replies: []fakeprovider.Reply{{Text: "Looking.\n", Calls: call("c1")}, {Text: "Still looking.", Calls: call("c2")}, {Text: "Empty."}},
			want:    "Looking.\n\nStill looking.\n\nEmpty.\n"},
		{name: "silent tool steps add nothing", env: askEnv{outTTY: true},
			replies: []fakeprovider.Reply{{Calls: call("c1")}, {Text: "It is empty."}},
			want:    "It is empty.\n"},
		{name: "a pipe gets the answer alone",
			replies: []fakeprovider.Reply{{Text: "Let me look.", Calls: call("c1")}, {Text: "It is empty."}},
			want:    "It is empty.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(tt.replies...)
			defer srv.Close()
			tt.env.server = srv
			r := runAsk(t, tt.env, "what is here?")
			if r.code != 0 || r.stdout != tt.want {
				t.Errorf("exit %d, stdout %q, want %q (stderr %q)", r.code, r.stdout, tt.want, r.stderr)
			}
		})
	}
}

// writes counts the writes stdout is given.
type writes struct {
	n   int
	all strings.Builder
}

func (w *writes) Write(p []byte) (int, error) { w.n++; return w.all.Write(p) }

// Into a pipe the answer streams as it comes where no step can turn out to
// be narration before tool calls: a run that offers no tools. With tools,
// a pipe gets the answer alone, at the end.
func TestAnswerStreamsIntoAPipeWithoutTools(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args      []string
		streamed  bool
		wantWrite string
	}{
		{[]string{"--no-tools", "hi"}, true, "It is a long answer, streamed.\n"},
		{[]string{"hi"}, false, "It is a long answer, streamed.\n"},
	} {
		srv := fakeprovider.Start(fakeprovider.Reply{Text: "It is a long answer, streamed."})
		defer srv.Close()
		out := &writes{}
		r := runAsk(t, askEnv{server: srv, stdout: out}, tt.args...)
		if r.code != 0 || out.all.String() != tt.wantWrite {
			t.Fatalf("ask %v: exit %d, stdout %q", tt.args, r.code, out.all.String())
		}
		if got := out.n > 2; got != tt.streamed {
			t.Errorf("ask %v into a pipe: %d writes; streamed %v, want %v", tt.args, out.n, got, tt.streamed)
		}
	}
}
