package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/demo"
	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
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

const demoQuestion = "Customers say discount codes make cart totals come out wrong. Find the cause and say how to fix it."

const demoAnswer = "The bug is in Total in cart.go: `total -= d.Percent` subtracts the discount's percentage as if it were euros, " +
	"so WELCOME10 takes €10 off any cart instead of 10 %.\n\n" +
	"codes.txt confirms that every code is a percentage (10, 25, 50). The fix is to scale the subtotal:\n\n" +
	"    total *= 1 - d.Percent/100\n\n" +
	"With that change a €200 cart with SPRING25 costs €150, not €175."

// demoReplies is the scripted model behind the recorded demo session: it
// explores the project with parallel calls, reads the file, checks one line
// with the shell, then answers.
func demoReplies() []fakeprovider.Reply {
	c := fakeprovider.Call
	return []fakeprovider.Reply{
		{Text: "Let me look at the project.", Calls: []providers.ToolCall{
			c("call_demo_1", "list_directory", `{"path":"."}`),
			c("call_demo_2", "search", `{"pattern":"Percent","path":"."}`),
		}},
		{Calls: []providers.ToolCall{c("call_demo_3", "read_file", `{"path":"cart.go"}`)}},
		{Calls: []providers.ToolCall{
			c("call_demo_4", "shell", `{"command":"grep -n 'total -=' cart.go && cat codes.txt"}`),
		}},
		{Text: demoAnswer},
	}
}

// TestDemoSession regenerates the built-in demo with -update, and always
// checks that it replays offline, through the real loop, with the real tools.
func TestDemoSession(t *testing.T) {
	t.Parallel()
	if *update {
		srv := fakeprovider.Start(demoReplies()...)
		defer srv.Close()
		dir := filepath.Join(os.TempDir(), "ask-demo")
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := demo.Extract(dir); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("..", "..", "internal", "demo", "testdata", "session.jsonl")
		r := runAsk(t, askEnv{wd: dir, env: map[string]string{"OPENROUTER_API_KEY": "demo-key-not-real"}},
			"--provider", "openrouter", "--model", "openai/gpt-4o-mini", "--base-url", srv.URL, "--yes", "--transcript", out, demoQuestion)
		if r.code != 0 {
			t.Fatalf("recording the demo: exit %d: %s", r.code, r.stderr)
		}
		t.Fatal("demo regenerated: rebuild and run the tests again without -update")
	}

	r := runAsk(t, askEnv{}, "replay", "--check", "--json")
	if r.code != 0 {
		t.Fatalf("replay of the demo: exit %d: %s", r.code, r.stderr)
	}
	var got run.Summary
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if got.Status != "completed" || got.Answer != demoAnswer || got.Provider != "openrouter" {
		t.Errorf("demo replay = %+v", got)
	}
	byName := map[string]string{}
	for _, c := range got.ToolCalls {
		if c.IsError {
			t.Errorf("demo tool %s failed: %s", c.Name, c.Content)
		}
		byName[c.Name] = c.Content
	}
	// The tools really ran on the extracted project.
	for name, want := range map[string]string{
		"list_directory": "cart.go",
		"search":         "Percent",
		"read_file":      "total -= d.Percent",
		"shell":          "STAFF50",
	} {
		if !strings.Contains(byName[name], want) {
			t.Errorf("%s result %q lacks %q", name, byName[name], want)
		}
	}
	if strings.Contains(string(demo.Transcript()), "demo-key-not-real") {
		t.Error("the demo transcript holds the key it was recorded with")
	}
}
