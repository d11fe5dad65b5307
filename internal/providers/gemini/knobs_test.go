package gemini

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// TestKnobs: --temperature becomes generationConfig.temperature and
// --reasoning generationConfig.thinkingConfig: a thinkingBudget for Gemini
// 2.5, a thinkingLevel for Gemini 3; a model that does not think, and a
// level a model does not take, are refused before anything is sent.
func TestKnobs(t *testing.T) {
	t.Parallel()
	user := json.RawMessage(`{"role":"user","parts":[{"text":"hi"}]}`)
	temp := func(f float64) *float64 { return &f }
	tests := []struct {
		name  string
		model string
		req   providers.Request
	}{
		{"knobs/temperature", "gemini-2.5-flash", providers.Request{Temperature: temp(0.4), MaxTokens: 100}},
		{"knobs/2.5-budget-medium", "gemini-2.5-pro", providers.Request{Reasoning: "medium"}},
		{"knobs/2.5-budget-high-models-prefix", "models/gemini-2.5-flash-lite", providers.Request{Reasoning: "high", Temperature: temp(1.5)}},
		{"knobs/3-level-low", "gemini-3-pro-preview", providers.Request{Reasoning: "low"}},
		{"knobs/3-level-medium", "gemini-3-flash-preview", providers.Request{Reasoning: "medium"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Model, tt.req.Messages = tt.model, []json.RawMessage{user}
			body, err := New().BuildRequest(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			providertest.Golden(t, tt.name, body)
		})
	}
	for _, bad := range []providers.Request{
		{Model: "gemini-2.0-flash", Reasoning: "low"},
		{Model: "gemini-1.5-pro", Reasoning: "high"},
		{Model: "gemini-3-pro-preview", Reasoning: "medium"},
		{Model: "gemini-2.5-flash", Reasoning: "max"},
	} {
		if _, err := New().BuildRequest(bad); !errors.Is(err, providers.ErrKnob) {
			t.Errorf("%s, reasoning %s: err = %v, want ErrKnob", bad.Model, bad.Reasoning, err)
		}
	}
}

// TestKnobsWithAttachment: a prompt with an image goes with --temperature,
// and with --reasoning (goldens only: there is no official spec).
func TestKnobsWithAttachment(t *testing.T) {
	t.Parallel()
	providertest.KnobsWithAttachment(t, New(), "gemini-2.5-flash", providertest.Spec{})
}
