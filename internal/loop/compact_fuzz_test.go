package loop_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

// randomRun is a conversation of random shape: steps of one to three
// calls, outputs from a few bytes to several kilobytes, text now and then.
func randomRun(rng *rand.Rand) agentRun {
	run := agentRun{outputs: map[string]string{}}
	steps := 1 + rng.IntN(50)
	id := 0
	for i := range steps {
		var calls []providers.ToolCall
		for range 1 + rng.IntN(3) {
			id++
			args := fmt.Sprintf(`{"command":"step %d call %d"}`, i, id)
			words := make([]string, rng.IntN(600))
			for w := range words {
				words[w] = fmt.Sprintf("w%d", rng.IntN(1e5))
			}
			run.outputs[args] = fmt.Sprintf("output %d of step %d: %s", id, i, strings.Join(words, " "))
			calls = append(calls, fakeprovider.Call(fmt.Sprintf("call_%d", id), "shell", args))
		}
		text := ""
		if rng.IntN(3) == 0 {
			text = fmt.Sprintf("Thinking about step %d.", i)
		}
		run.replies = append(run.replies, fakeprovider.Reply{Text: text, Calls: calls})
	}
	run.replies = append(run.replies, fakeprovider.Reply{Text: "The handler is fixed and the tests pass."})
	return run
}

// jsonText is s as it stands inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// FuzzCompaction holds compaction to its promises over random
// conversations, windows and thresholds, in every protocol: a compaction
// never makes the conversation larger; the system prompt, the task and the
// last step's outputs stay verbatim in every request; every call id sent
// is answered; the window known, no request crosses it; and a run either
// answers or ends with an error that names the window.
func FuzzCompaction(f *testing.F) {
	for i := range 8 {
		f.Add(uint64(i), uint8(i), uint16(2000+i*900), uint8(50+5*i))
	}
	f.Fuzz(func(t *testing.T, seed uint64, proto uint8, window uint16, at uint8) {
		rng := rand.New(rand.NewPCG(seed, 1))
		protocol := fakeprovider.Protocols[int(proto)%len(fakeprovider.Protocols)]
		run := randomRun(rng)
		w := max(int(window), 500)
		cfg := loop.Config{Window: w, CompactAt: 1 + int(at)%100}
		r := runWindowed(t, protocol, w, run, cfg)

		for _, ev := range r.events {
			if ev.Type == records.TypeContextCompacted && ev.AfterTokens > ev.BeforeTokens {
				t.Fatalf("a compaction made the conversation larger: %+v", *ev.Compaction)
			}
		}
		switch {
		case r.res.Status == loop.StatusCompleted:
		case r.res.Status == loop.StatusError && errors.Is(r.res.Err, loop.ErrContextWindow):
			if !strings.Contains(r.res.Err.Error(), fmt.Sprint(w)) {
				t.Fatalf("the error does not name the window %d: %v", w, r.res.Err)
			}
		default:
			t.Fatalf("status %s: %v", r.res.Status, r.res.Err)
		}
		if bill := r.model.Bill(); bill.Refused > 0 {
			t.Fatalf("%d requests crossed the known window", bill.Refused)
		}

		reqs := r.srv.Requests()
		for i, body := range reqs {
			s := string(body)
			if !strings.Contains(s, jsonText(task)) || !strings.Contains(s, jsonText(system)) {
				t.Fatalf("request %d lost the system prompt or the task", i)
			}
			if fakeprovider.IsSummaryRequest(body, loop.SummaryPrompt) {
				continue
			}
			for id := range len(run.outputs) + 1 {
				if n := strings.Count(s, fmt.Sprintf(`"call_%d"`, id)); n%2 != 0 {
					t.Fatalf("request %d: call_%d appears %d times: a call without its answer", i, id, n)
				}
			}
		}
		// Each request after a step carries that step's outputs whole,
		// but where that step alone would not fit the window: then the
		// compaction before the request cut its longest outputs, and each
		// keeps its head and says so.
		cutAt := map[int]bool{}
		for _, ev := range r.events {
			if ev.Type == records.TypeContextCompacted && ev.Cut > 0 {
				cutAt[ev.Step] = true
			}
		}
		step := 0
		for i, body := range reqs {
			if fakeprovider.IsSummaryRequest(body, loop.SummaryPrompt) {
				continue
			}
			if step > 0 && i > 0 {
				for _, c := range run.replies[step-1].Calls {
					out := run.outputs[c.Arguments]
					switch {
					case strings.Contains(string(body), jsonText(out)):
					case cutAt[step+1] && strings.Contains(string(body), jsonText(out[:min(len(out), 200)])) &&
						strings.Contains(string(body), fmt.Sprintf("of this result's %d bytes here", len(out))):
					default:
						t.Fatalf("request %d lost the output of %s from the step just before", i, c.ID)
					}
				}
			}
			step++
		}
	})
}
