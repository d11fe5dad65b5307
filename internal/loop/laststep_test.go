package loop_test

import (
	"context"
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
