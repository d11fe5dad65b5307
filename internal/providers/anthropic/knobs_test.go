package anthropic

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// TestKnobs: --reasoning turns on extended thinking with a budget that
// max_tokens makes room for, and forbids a temperature other than 1;
// --temperature is sent as given. The recorded request with thinking
// (llm-anthropic) has the same shape.
func TestKnobs(t *testing.T) {
	t.Parallel()
	user := json.RawMessage(`{"role":"user","content":"hi"}`)
	temp := func(f float64) *float64 { return &f }
	tests := []struct {
		name           string
		req            providers.Request
		maxTokens      int64
		budget         int64
		hasTemperature bool
	}{
		{"knobs/temperature", providers.Request{Temperature: temp(0.5)}, DefaultMaxTokens, 0, true},
		{"knobs/reasoning-low", providers.Request{Reasoning: "low"}, DefaultMaxTokens + 1024, 1024, false},
		{"knobs/reasoning-high-max-tokens", providers.Request{Reasoning: "high", MaxTokens: 2000}, 2000 + 16384, 16384, false},
		{"knobs/reasoning-medium-temperature-1", providers.Request{Reasoning: "medium", Temperature: temp(1)}, DefaultMaxTokens + 4096, 4096, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Model, tt.req.Messages = "claude-sonnet-4-5", []json.RawMessage{user}
			body, err := New().BuildRequest(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			providertest.Golden(t, tt.name, body)
			doc := gjson.ParseBytes(body)
			if got := doc.Get("max_tokens").Int(); got != tt.maxTokens {
				t.Errorf("max_tokens = %d, want %d", got, tt.maxTokens)
			}
			if got := doc.Get("thinking.budget_tokens").Int(); got != tt.budget || (tt.budget > 0 && (doc.Get("thinking.type").String() != "enabled" || got >= doc.Get("max_tokens").Int() || got < 1024)) {
				t.Errorf("thinking = %s: want enabled, budget %d, at least 1024 and below max_tokens", doc.Get("thinking").Raw, tt.budget)
			}
			if doc.Get("temperature").Exists() != tt.hasTemperature {
				t.Errorf("temperature = %s", doc.Get("temperature").Raw)
			}
		})
	}
	// The recorded request with thinking: same members, same types.
	recorded := gjson.ParseBytes(providertest.Read(t, "llm-anthropic-thinking-tool-stream.request.json"))
	if recorded.Get("thinking.type").String() != "enabled" || recorded.Get("thinking.budget_tokens").Int() != int64(ThinkingBudgets["low"]) {
		t.Errorf("the recorded thinking %s is not what low sends", recorded.Get("thinking").Raw)
	}
	for _, bad := range []providers.Request{
		{Model: "claude-sonnet-4-5", Reasoning: "high", Temperature: temp(0.2)},
		{Model: "claude-sonnet-4-5", Reasoning: "max"},
	} {
		if _, err := New().BuildRequest(bad); !errors.Is(err, providers.ErrKnob) {
			t.Errorf("%+v: err = %v, want ErrKnob", bad, err)
		}
	}
}

// TestKnobsWithAttachment: a prompt with an image goes with --temperature,
// and with --reasoning (goldens only: there is no official spec).
func TestKnobsWithAttachment(t *testing.T) {
	t.Parallel()
	providertest.KnobsWithAttachment(t, New(), "claude-sonnet-4-5", providertest.Spec{})
}
