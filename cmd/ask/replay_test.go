package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// What a replay sends and answers is internal/run's (replay_test.go); these
// are `ask replay`'s own: the terminal, and the flags' wiring.

// Replaying with the recorded results runs nothing, so it asks nobody: a
// terminal that would say no does not change what the replay sends.
func TestRecordedResultsNeverAsk(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "shell", `{"command":"echo hi"}`)}},
		fakeprovider.Reply{Text: "it said hi"})
	defer srv.Close()
	dir := t.TempDir()
	transcript := filepath.Join(dir, "run.jsonl")
	if r := runAsk(t, askEnv{server: srv, wd: dir}, "--yes", "--transcript", transcript, "run it"); r.code != 0 {
		t.Fatalf("recording: exit %d, stderr %s", r.code, r.stderr)
	}
	onTTY := askEnv{wd: dir, tty: true, ttyPath: answersOnTerminal(t, "n\nn\n")}
	r := runAsk(t, onTTY, "replay", "--check", "--recorded-results", transcript)
	if r.code != 0 || strings.Contains(r.stderr, "allow") {
		t.Errorf("replay --check --recorded-results at a terminal: exit %d, stderr %s", r.code, r.stderr)
	}
}
