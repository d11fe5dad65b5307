package loop_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/records"
)

// agentRun is a long run in the shape of a coding agent's (SWE-agent's,
// mini-swe-agent's): look around, read files, run the tests, edit, run
// them again; each command's output a few hundred to a few thousand bytes,
// and every output different, so that nothing is a repeat.
type agentRun struct {
	replies []fakeprovider.Reply
	outputs map[string]string // call arguments → the tool's output
	failed  map[string]bool   // call arguments → whether the tool failed
}

var agentCommands = []string{"ls -la %s", "cat src/module_%d.py", "grep -rn 'def handler' src/%d", "python -m pytest tests/test_%d.py -x", "sed -n '1,80p' src/util_%d.py", "git diff --stat HEAD~%d"}

func newAgentRun(steps int, seed uint64) agentRun {
	rng := rand.New(rand.NewPCG(seed, 41))
	run := agentRun{outputs: map[string]string{}}
	for i := range steps {
		cmd := fmt.Sprintf(agentCommands[rng.IntN(len(agentCommands))], i)
		args := fmt.Sprintf(`{"command":%q}`, cmd)
		var out strings.Builder
		for line := range 8 + rng.IntN(60) {
			fmt.Fprintf(&out, "%s:%d: value_%d = compute(%d, %q)\n", cmd, line, rng.IntN(1e6), i, strings.Repeat("x", rng.IntN(20)))
		}
		run.outputs[args] = out.String()
		text := ""
		if i%5 == 0 {
			text = fmt.Sprintf("Step %d: looking at %s next.", i+1, cmd)
		}
		run.replies = append(run.replies, fakeprovider.Reply{Text: text, Calls: []providers.ToolCall{fakeprovider.Call(fmt.Sprintf("call_%d", i), "shell", args)}})
	}
	run.replies = append(run.replies, fakeprovider.Reply{Text: "The handler is fixed and the tests pass."})
	return run
}

func (a agentRun) Call(_ context.Context, name, args string) (string, bool) {
	if out, ok := a.outputs[args]; ok {
		return out, a.failed[args]
	}
	return "no such command: " + args, true
}

const (
	testWindow = 8000
	task       = "Fix the failing handler test in this repository; run the tests to check."
	system     = "You are a coding agent. Use the shell tool to look at files and run commands."
	summary    = "Summary: the repository's handler lives in src/; the tests in tests/ fail on value_17; nothing was changed yet."
)

// windowedRun runs a long run under a model whose window the fake
// enforces, in one protocol, and returns what the loop and the model saw.
type windowedRun struct {
	res    *loop.Result
	events []records.Event
	srv    *fakeprovider.Server
	model  *fakeprovider.Windowed
	notes  []loop.CompactNote
}

func runWindowed(t testing.TB, protocol string, window int, run agentRun, cfg loop.Config) windowedRun {
	t.Helper()
	var mu sync.Mutex
	next := 0
	model := &fakeprovider.Windowed{Protocol: protocol, Window: window, Answer: func(body []byte) fakeprovider.Reply {
		if fakeprovider.IsSummaryRequest(body, loop.SummaryPrompt) {
			return fakeprovider.Reply{Text: summary}
		}
		mu.Lock()
		defer mu.Unlock()
		if next >= len(run.replies) {
			return fakeprovider.Reply{Text: "no scripted reply left"}
		}
		next++
		return run.replies[next-1]
	}}
	srv := fakeprovider.StartWindowed(model)
	t.Cleanup(srv.Close)
	p, err := catalog.NewProtocol(protocol)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	var notes []loop.CompactNote
	cfg.Model = &providers.Caller{Provider: "fake-" + protocol, Protocol: p, BaseURL: srv.URL, Model: "m", Key: "k",
		Sleep: func(context.Context, time.Duration) error { return nil }}
	cfg.Prompt, cfg.System = task, system
	if cfg.Tools == nil {
		cfg.Tools = []providers.Tool{{Name: "shell", Description: "Run a command", Parameters: []byte(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}}
	}
	cfg.Toolbox = run
	cfg.MaxSteps = len(run.replies) + 1
	cfg.Recorder = records.NewRecorder(&buf)
	cfg.OnCompact = func(_ context.Context, n loop.CompactNote) { notes = append(notes, n) }
	cfg.Recorder.Emit(records.Event{Type: records.TypeRunStarted})
	res := loop.Run(context.Background(), cfg)
	events, err := records.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return windowedRun{res: res, events: events, srv: srv, model: model, notes: notes}
}

// Long runs die at an 8,000-token window without compaction (issue 41),
// in every protocol, with the protocol's own error; with it, each runs to
// its answer. The window known, no request crosses it; unknown, the
// provider's refusal compacts and the request is retried once.
func TestLongRunsFitAWindow(t *testing.T) {
	t.Parallel()
	for _, protocol := range fakeprovider.Protocols {
		for _, known := range []bool{true, false} {
			name := protocol + map[bool]string{true: " window known", false: " window unknown"}[known]
			t.Run(name, func(t *testing.T) {
				if testing.Short() && (protocol != "openai" || !known) {
					t.Skip("a 120-step run twice")
				}
				t.Parallel()
				run := newAgentRun(120, 7)
				window := 0
				if known {
					window = testWindow
				}

				off := runWindowed(t, protocol, testWindow, run, loop.Config{Window: window, NoCompact: true})
				if off.res.Status != loop.StatusError || off.res.Steps >= len(run.replies) {
					t.Fatalf("--compact off: status %s after %d steps, want an error before the answer", off.res.Status, off.res.Steps)
				}
				if !errors.Is(off.res.Err, loop.ErrContextWindow) {
					t.Errorf("--compact off: error %v does not name the window", off.res.Err)
				}
				if !known && !providers.IsContextTooLong(off.res.Err) {
					t.Errorf("--compact off: error %v is not the provider's context-too-long answer", off.res.Err)
				}

				on := runWindowed(t, protocol, testWindow, run, loop.Config{Window: window})
				if on.res.Status != loop.StatusCompleted || on.res.Answer != "The handler is fixed and the tests pass." {
					t.Fatalf("status %s after %d steps (%v), answer %q", on.res.Status, on.res.Steps, on.res.Err, on.res.Answer)
				}
				if len(on.res.Calls) != len(run.replies)-1 {
					t.Errorf("%d calls ran, want %d", len(on.res.Calls), len(run.replies)-1)
				}
				bill := on.model.Bill()
				if known && bill.Refused != 0 {
					t.Errorf("the window known, %d requests crossed it", bill.Refused)
				}
				if !known && bill.Refused == 0 {
					t.Errorf("the window unknown, no request was refused: the test proves nothing")
				}
				if len(on.res.Compactions) == 0 {
					t.Fatal("no compaction")
				}
				var compacted, summarised int
				for _, ev := range on.events {
					if ev.Type == records.TypeContextCompacted {
						compacted++
						c := ev.Compaction
						if c.AfterTokens >= c.BeforeTokens || c.Pruned+c.Summarised == 0 || c.AfterTokens > testWindow {
							t.Errorf("compaction at step %d: %+v", ev.Step, *c)
						}
						if c.Summarised > 0 {
							summarised++
							// Ollama reports no cache reads.
							if c.Summary != summary || c.CacheRead == 0 && protocol != "ollama" {
								t.Errorf("summary %q, %d tokens read from the cache", c.Summary, c.CacheRead)
							}
						}
					}
				}
				if summarised == 0 {
					t.Error("no compaction summarised: pruning alone was enough, and the test proves less")
				}
				if compacted != len(on.res.Compactions) || len(on.notes) != 2*compacted {
					t.Errorf("%d events, %d compactions, %d notes", compacted, len(on.res.Compactions), len(on.notes))
				}
				checkRequests(t, protocol, run, on)
			})
		}
	}
}

// A step whose output alone is over the window does not end the run:
// compaction's last resort cuts that output to its head and tail, with a
// line saying so, and the transcript keeps it whole. Before the cut, the
// run ended at that step with the window's error.
func TestALongResultIsCutNotFatal(t *testing.T) {
	t.Parallel()
	for _, protocol := range fakeprovider.Protocols {
		t.Run(protocol, func(t *testing.T) {
			if testing.Short() && protocol != "openai" {
				t.Skip("one protocol under -short")
			}
			t.Parallel()
			run := newAgentRun(60, 7)
			const at = 30
			call := run.replies[at].Calls[0]
			var out strings.Builder
			for i := range 900 {
				fmt.Fprintf(&out, "pkg/handler_test.go:%d: want %d, got %d\n", i, i, i+1)
			}
			long := out.String() // about 12,000 tokens
			run.outputs[call.Arguments] = long
			first, _, _ := strings.Cut(long, "\n")
			lastLine := long[strings.LastIndex(long[:len(long)-1], "\n")+1 : len(long)-1]

			on := runWindowed(t, protocol, testWindow, run, loop.Config{Window: testWindow})
			if on.res.Status != loop.StatusCompleted {
				t.Fatalf("status %s after %d steps: %v", on.res.Status, on.res.Steps, on.res.Err)
			}
			cuts := 0
			for _, c := range on.res.Compactions {
				cuts += c.Cut
				if c.Cut > 0 && (c.AfterTokens > testWindow || c.AfterTokens >= c.BeforeTokens) {
					t.Errorf("the compaction that cut: %+v", c)
				}
			}
			if cuts != 1 {
				t.Errorf("%d results cut, want the one long one", cuts)
			}
			// The request after that step carries its output's head and
			// tail, and says what was cut.
			seen := false
			for _, body := range on.srv.Requests() {
				s := string(body)
				if !strings.Contains(s, call.ID) || fakeprovider.IsSummaryRequest(body, loop.SummaryPrompt) || fakeprovider.Tokens(body) > testWindow {
					continue
				}
				if strings.Contains(s, "[ask cut ") && strings.Contains(s, first) && strings.Contains(s, lastLine) &&
					strings.Contains(s, fmt.Sprintf("of this result's %d bytes here to fit the model's %d-token context window", len(long), testWindow)) {
					seen = true
				}
			}
			if !seen {
				t.Error("no request carried the cut output's head, tail and note")
			}
			// The transcript keeps it whole.
			whole := false
			for _, ev := range on.events {
				if ev.Type == records.TypeToolFinished && ev.Content == long {
					whole = true
				}
			}
			if !whole {
				t.Error("the transcript lost the whole output")
			}
		})
	}
}

// checkRequests holds every request the model answered to what compaction
// keeps: the system prompt and the task's prompt in each, the last step's
// output verbatim, every call answered.
func checkRequests(t *testing.T, protocol string, run agentRun, w windowedRun) {
	t.Helper()
	reqs := w.srv.Requests()
	for i, body := range reqs {
		if fakeprovider.Tokens(body) > testWindow {
			continue // refused, and retried compacted
		}
		s := string(body)
		if !strings.Contains(s, task) || !strings.Contains(s, "You are a coding agent.") {
			t.Fatalf("request %d lost the system prompt or the task", i)
		}
		if fakeprovider.IsSummaryRequest(body, loop.SummaryPrompt) {
			continue
		}
		// Every call id sent is answered in the same request (Gemini's
		// calls carry their ids as the fake sent them).
		for j := range len(run.replies) - 1 {
			id := fmt.Sprintf("call_%d", j)
			if n := strings.Count(s, `"`+id+`"`); n%2 != 0 {
				t.Errorf("request %d: %s appears %d times: a call without its answer", i, id, n)
			}
		}
	}
	// The last request carries the last output as the tool gave it.
	last := string(reqs[len(reqs)-1])
	lastArgs := run.replies[len(run.replies)-2].Calls[0].Arguments
	firstLine, _, _ := strings.Cut(run.outputs[lastArgs], "\n")
	if !strings.Contains(last, strings.ReplaceAll(firstLine, `"`, `\"`)) {
		t.Errorf("the last request lost the last step's output %q", firstLine)
	}
}
