package main

import (
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
		{name: "both terminals", env: askEnv{tty: true},
			replies: []fakeprovider.Reply{{Text: "Let me look.", Calls: call("c1")}, {Text: "It is empty."}},
			want:    "Let me look.\n\nIt is empty.\n"},
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
