package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

// A long run under a model with an 8,000-token window, through everything
// a run is: --context-window, the PreCompact and PostCompact hooks in
// Claude Code's form, the context.compacted events and their stderr line,
// --json's compactions; then `ask replay --check` reproduces it, summary
// and all, from the transcript alone.
func TestLongRunCompactsAndReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("a 70-step run and its replay")
	}
	t.Parallel()
	const steps = 70
	var replies []fakeprovider.Reply
	for i := range steps {
		// Each command prints about 2 KB, different every step.
		cmd := fmt.Sprintf(`seq %d %d | sed 's/^/line of step %d: /'`, i*1000, i*1000+70, i)
		replies = append(replies, fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call(fmt.Sprint("call_", i), "shell", fmt.Sprintf(`{"command":%q}`, cmd))}})
	}
	replies = append(replies, fakeprovider.Reply{Text: "Done: every step ran."})
	var mu sync.Mutex
	next := 0
	model := &fakeprovider.Windowed{Protocol: "openai", Window: 8000, Answer: func(body []byte) fakeprovider.Reply {
		if fakeprovider.IsSummaryRequest(body, loop.SummaryPrompt) {
			return fakeprovider.Reply{Text: "Summary: steps so far printed numbered lines; nothing failed."}
		}
		mu.Lock()
		defer mu.Unlock()
		next++
		return replies[min(next, len(replies))-1]
	}}
	srv := fakeprovider.StartWindowed(model)
	t.Cleanup(srv.Close)

	w := newWorld(t, srv)
	w.environ = []string{"PATH=" + os.Getenv("PATH")}
	hookDir := t.TempDir()
	config := filepath.Join(t.TempDir(), "config.json")
	hook := func(file string) string {
		return fmt.Sprintf(`[{"matcher":"auto","hooks":[{"type":"command","command":"cat >> %s; echo >> %s"}]}]`, filepath.Join(hookDir, file), filepath.Join(hookDir, file))
	}
	if err := os.WriteFile(config, []byte(`{"hooks":{"PreCompact":`+hook("pre.jsonl")+`,"PostCompact":`+hook("post.jsonl")+`}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	w.with("ASK_CONFIG", config)
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	r := w.ask("run the steps", "yes", true, "context-window", 8000, "transcript", transcript)
	if r.err != nil || r.Status != loop.StatusCompleted || r.Steps != steps+1 {
		t.Fatalf("status %v after %d steps (%v, %v): %s", r.Status, r.Steps, r.err, r.Result.Err, r.stderr)
	}
	if bill := model.Bill(); bill.Refused != 0 {
		t.Errorf("%d requests crossed the window", bill.Refused)
	}
	sum := r.summary()
	if len(sum.Compactions) == 0 {
		t.Fatal("--json has no compactions")
	}
	summarised := false
	for _, c := range sum.Compactions {
		summarised = summarised || c.Summarised > 0
	}
	if !summarised {
		t.Error("no compaction summarised")
	}
	if n := strings.Count(r.stderr, "ask: compacted the conversation to fit the model's 8000-token window"); n != len(sum.Compactions) {
		t.Errorf("stderr says %d compactions, want %d:\n%s", n, len(sum.Compactions), r.stderr)
	}
	if r.events[0].Settings.ContextWindow != 8000 {
		t.Errorf("run.started records window %d", r.events[0].Settings.ContextWindow)
	}

	// The hooks: one PreCompact and one PostCompact per compaction, in
	// Claude Code's payload.
	for file, event := range map[string]string{"pre.jsonl": "PreCompact", "post.jsonl": "PostCompact"} {
		b, err := os.ReadFile(filepath.Join(hookDir, file))
		if err != nil {
			t.Fatalf("%s hook never ran: %v", event, err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != len(sum.Compactions) {
			t.Errorf("%s ran %d times for %d compactions", event, len(lines), len(sum.Compactions))
		}
		var in map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &in); err != nil {
			t.Fatal(err)
		}
		if in["hook_event_name"] != event || in["trigger"] != "auto" || in["session_id"] != r.ID {
			t.Errorf("%s payload %v", event, in)
		}
	}

	// The replay makes the same requests, summaries included, and
	// compacts where the run did.
	rp := w.replay(transcript, ReplayOptions{Yes: Given(true, "flag --yes")})
	if rp.Result == nil || rp.Status != loop.StatusCompleted || rp.diffs != "" {
		t.Fatalf("replay: %+v, diffs:\n%s", rp.err, rp.diffs)
	}
	if got, want := compactionsOf(t, rp.transcript), compactionsOf(t, r.transcript); got != want {
		t.Errorf("replay compacted\n%s\nthe run\n%s", got, want)
	}
}

func compactionsOf(t *testing.T, transcript []byte) string {
	t.Helper()
	events, err := records.Read(bytes.NewReader(transcript))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ev := range events {
		if ev.Type == records.TypeContextCompacted {
			fmt.Fprintf(&b, "step %d: %+v\n", ev.Step, *ev.Compaction)
		}
	}
	return b.String()
}
