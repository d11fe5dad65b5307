package loop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/openai"
)

// recordingModel keeps every request the loop makes.
type recordingModel struct {
	*providers.Caller
	reqs []providers.Request
}

func (m *recordingModel) Call(ctx context.Context, req providers.Request, h providers.Hooks) (*providers.Turn, error) {
	m.reqs = append(m.reqs, req)
	return m.Caller.Call(ctx, req, h)
}

// Only the last step a limit allows withholds the tools and says so.
func TestLastStepOffersNoTools(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		maxSteps int
		replies  int // tool-calling replies before the answer
		tools    bool
		withheld []bool // per request
	}{
		{"answered before the limit", 3, 1, true, []bool{false, false}},
		{"answered on the last step", 3, 2, true, []bool{false, false, true}},
		{"one step", 1, 0, true, []bool{true}},
		{"no tools to withhold", 1, 0, false, []bool{false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var replies []fakeprovider.Reply
			for i := range tt.replies {
				replies = append(replies, calls(call(fmt.Sprint(i), "read_file", fmt.Sprintf(`{"path":"x%d"}`, i))))
			}
			replies = append(replies, text("the answer"))
			srv := fakeprovider.Start(replies...)
			defer srv.Close()
			m := &recordingModel{Caller: &providers.Caller{Provider: "fake", Protocol: openai.New(), BaseURL: srv.URL, Model: "m", Key: "k",
				Sleep: func(context.Context, time.Duration) error { return nil }}}
			cfg := loop.Config{Model: m, Prompt: "q", MaxSteps: tt.maxSteps, System: "be brief", Toolbox: &fakeTools{}}
			if tt.tools {
				cfg.Tools = []providers.Tool{{Name: "read_file"}}
			}
			res := loop.Run(context.Background(), cfg)
			if res.Status != loop.StatusCompleted || res.Answer != "the answer" {
				t.Fatalf("status %s, answer %q: %v", res.Status, res.Answer, res.Err)
			}
			if len(m.reqs) != len(tt.withheld) {
				t.Fatalf("%d requests, want %d", len(m.reqs), len(tt.withheld))
			}
			for i, req := range m.reqs {
				told := strings.HasSuffix(req.System, loop.LastStepNote)
				if req.NoToolCalls != tt.withheld[i] || told != tt.withheld[i] {
					t.Errorf("request %d: NoToolCalls %v, told it is the last step %v; want %v", i+1, req.NoToolCalls, told, tt.withheld[i])
				}
				if !strings.HasPrefix(req.System, "be brief") {
					t.Errorf("request %d: system %q lost the run's own", i+1, req.System)
				}
			}
		})
	}
}

// Each request vouches for the messages the one before was built from, so
// that a step's protocol checks only what the step added; the first
// request vouches for none, a conversation carried from a transcript
// included.
func TestRequestsVouchForTheMessagesSentBefore(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(calls(call("1", "read_file", `{"path":"a"}`)), calls(call("2", "read_file", `{"path":"b"}`)), text("done"))
	defer srv.Close()
	m := &recordingModel{Caller: &providers.Caller{Provider: "fake", Protocol: openai.New(), BaseURL: srv.URL, Model: "m", Key: "k",
		Sleep: func(context.Context, time.Duration) error { return nil }}}
	carried := []json.RawMessage{json.RawMessage(`{"role":"user","content":"before"}`), json.RawMessage(`{"role":"assistant","content":"ok"}`)}
	res := loop.Run(context.Background(), loop.Config{Model: m, Prompt: "q", MaxSteps: 5, History: carried,
		Tools: []providers.Tool{{Name: "read_file"}}, Toolbox: &fakeTools{}})
	if res.Status != loop.StatusCompleted {
		t.Fatalf("status %s: %v", res.Status, res.Err)
	}
	if len(m.reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(m.reqs))
	}
	for i, req := range m.reqs {
		want := 0
		if i > 0 {
			want = len(m.reqs[i-1].Messages)
		}
		if req.Checked != want || req.Checked >= len(req.Messages) {
			t.Errorf("request %d: %d of %d messages vouched for, want %d", i+1, req.Checked, len(req.Messages), want)
		}
	}
}
