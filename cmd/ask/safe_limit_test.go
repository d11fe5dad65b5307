package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
)

// A --safe refusal decides the exit code even when the run then stops at a
// limit: a CI job must see 6 whenever something forbidden was tried, while
// the status still says how the run ended.
func TestSafeRefusalWinsOverALimit(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("s", "shell", `{"command":"rm -rf build"}`)}},
		fakeprovider.Reply{Text: "still working", Calls: []providers.ToolCall{fakeprovider.Call("l", "list_directory", `{}`)}})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv, wd: t.TempDir()}, "--safe", "--json", "--max-steps", "2", "clean up")
	if r.code != exitRefused {
		t.Fatalf("exit %d, want %d; stderr %s", r.code, exitRefused, r.stderr)
	}
	var got run.Summary
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
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
	if r := runAsk(t, askEnv{server: srv2, wd: t.TempDir()}, "--max-steps", "2", "look"); r.code != exitLimit {
		t.Errorf("exit %d without --safe, want %d; stderr %s", r.code, exitLimit, r.stderr)
	}
}
