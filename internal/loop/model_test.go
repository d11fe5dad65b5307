package loop_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/openai"
)

// countingProtocol counts the tool results rendered in it.
type countingProtocol struct {
	providers.Protocol
	results int
}

func (p *countingProtocol) FormatToolResults(r []providers.ToolResult) ([]json.RawMessage, error) {
	p.results += len(r)
	return p.Protocol.FormatToolResults(r)
}

// switchingModel changes its caller's protocol after the first step, as
// cmd/ask's fallback to the text protocol does.
type switchingModel struct {
	*providers.Caller
	next providers.Protocol
}

func (m *switchingModel) Call(ctx context.Context, req providers.Request, h providers.Hooks) (*providers.Turn, error) {
	turn, err := m.Caller.Call(ctx, req, h)
	m.Caller.Protocol = m.next
	return turn, err
}

// The loop renders history in the protocol the model reports now, not in
// one it was given at the start.
func TestLoopFollowsTheModelsProtocol(t *testing.T) {
	srv := fakeprovider.Start(calls(call("1", "read_file", `{"path":"a"}`)), text("done"))
	defer srv.Close()
	first, second := &countingProtocol{Protocol: openai.New()}, &countingProtocol{Protocol: openai.New()}
	m := &switchingModel{Caller: &providers.Caller{Provider: "fake", Protocol: first, BaseURL: srv.URL, Model: "m", Key: "k",
		Sleep: func(context.Context, time.Duration) error { return nil }}, next: second}
	res := loop.Run(context.Background(), loop.Config{Model: m, Prompt: "q", Tools: []providers.Tool{{Name: "read_file"}}, Toolbox: &fakeTools{}})
	if res.Status != loop.StatusCompleted {
		t.Fatalf("status %s: %v", res.Status, res.Err)
	}
	if first.results != 0 || second.results != 1 {
		t.Errorf("tool results rendered %d times in the first protocol and %d in the second; want 0 and 1", first.results, second.results)
	}
}
