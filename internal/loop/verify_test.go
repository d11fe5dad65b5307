package loop_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/openai"
)

func newRecordingModel(srv *fakeprovider.Server) *recordingModel {
	return &recordingModel{Caller: &providers.Caller{Provider: "fake", Protocol: openai.New(), BaseURL: srv.URL, Model: "m", Key: "k",
		Sleep: func(context.Context, time.Duration) error { return nil }}}
}

// Verify sees every final answer: its Again goes back to the model as the
// next user turn, its Status ends the run, and going back is a request
// the step limit must allow.
func TestVerify(t *testing.T) {
	t.Parallel()
	failed := errors.New("the check never passed")
	for _, tt := range []struct {
		name       string
		maxSteps   int
		verdicts   []loop.Verdict // per answer; past the end, the zero verdict
		wantStatus string
		wantSteps  int
	}{
		{"no verdict completes", 10, nil, loop.StatusCompleted, 1},
		{"sent back twice", 10, []loop.Verdict{{Again: "try 1"}, {Again: "try 2"}}, loop.StatusCompleted, 3},
		{"ended by its status", 10, []loop.Verdict{{Again: "try 1"}, {Status: loop.StatusCheckFailed, Err: failed}}, loop.StatusCheckFailed, 2},
		{"no step left to go back", 2, []loop.Verdict{{Again: "try 1"}, {Again: "try 2"}}, loop.StatusMaxSteps, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(text("a1"), text("a2"), text("a3"))
			defer srv.Close()
			m := newRecordingModel(srv)
			var seen []string
			res := loop.Run(context.Background(), loop.Config{Model: m, Prompt: "q", MaxSteps: tt.maxSteps,
				Verify: func(_ context.Context, answer string) loop.Verdict {
					seen = append(seen, answer)
					if len(seen) <= len(tt.verdicts) {
						return tt.verdicts[len(seen)-1]
					}
					return loop.Verdict{}
				}})
			if res.Status != tt.wantStatus || res.Steps != tt.wantSteps {
				t.Fatalf("status %s after %d steps, want %s after %d (%v)", res.Status, res.Steps, tt.wantStatus, tt.wantSteps, res.Err)
			}
			if tt.wantStatus == loop.StatusCheckFailed && !errors.Is(res.Err, failed) {
				t.Errorf("err = %v, want the verdict's", res.Err)
			}
			// Each Again is the last message of the next request.
			for i, req := range m.reqs[1:] {
				last := string(req.Messages[len(req.Messages)-1])
				if want := tt.verdicts[i].Again; !strings.Contains(last, want) {
					t.Errorf("request %d ends with %s, want the text %q", i+2, last, want)
				}
			}
		})
	}
}

// Budget is asked before every request after the first: a spent budget
// stops the run before the request; one that the next request would use
// up makes it the last step, without tools, and the run ends StatusBudget
// with that step's answer.
func TestBudget(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		states     []loop.BudgetState // before requests 2, 3, ...
		wantStatus string
		wantReqs   int
		wantAnswer string
		withheld   int // the request (1-based) that withholds the tools, 0 for none
	}{
		{"never spent", nil, loop.StatusCompleted, 3, "done", 0},
		{"spent before the third request", []loop.BudgetState{{}, {Spent: true, Why: "tokens"}}, loop.StatusBudget, 2, "", 0},
		{"the last step answers", []loop.BudgetState{{Last: true, Why: "tokens"}}, loop.StatusBudget, 2, "best so far", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			replies := []fakeprovider.Reply{calls(call("1", "read_file", `{"path":"a"}`))}
			if tt.withheld == 2 {
				replies = append(replies, text("best so far"))
			} else {
				replies = append(replies, calls(call("2", "read_file", `{"path":"b"}`)), text("done"))
			}
			srv := fakeprovider.Start(replies...)
			defer srv.Close()
			m := newRecordingModel(srv)
			asked := 0
			res := loop.Run(context.Background(), loop.Config{Model: m, Prompt: "q", MaxSteps: 10,
				Tools: []providers.Tool{{Name: "read_file"}}, Toolbox: &fakeTools{},
				Budget: func(spent, last providers.Usage) loop.BudgetState {
					asked++
					if asked <= len(tt.states) {
						return tt.states[asked-1]
					}
					return loop.BudgetState{}
				}})
			if res.Status != tt.wantStatus || len(m.reqs) != tt.wantReqs || res.Answer != tt.wantAnswer {
				t.Fatalf("status %s, %d requests, answer %q; want %s, %d, %q", res.Status, len(m.reqs), res.Answer, tt.wantStatus, tt.wantReqs, tt.wantAnswer)
			}
			for i, req := range m.reqs {
				if want := i+1 == tt.withheld; req.NoToolCalls != want {
					t.Errorf("request %d: NoToolCalls %v, want %v", i+1, req.NoToolCalls, want)
				}
			}
			if tt.wantStatus == loop.StatusBudget && (res.Err == nil || res.Err.Error() != "tokens") {
				t.Errorf("err = %v, want the budget's why", res.Err)
			}
		})
	}
}
