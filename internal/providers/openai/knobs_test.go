package openai

import (
	"errors"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// knobRequest is the first request of a recorded run, with the knobs set.
func knobRequest(t *testing.T, temperature *float64, reasoning string) providers.Request {
	t.Helper()
	r := requestFrom(t, providertest.Read(t, "openai-chat/fantasy-gpt5-tool-stream.request.json"))
	r.Temperature, r.Reasoning = temperature, reasoning
	return r
}

func ptr(f float64) *float64 { return &f }

// TestKnobs: --temperature becomes "temperature" and --reasoning
// "reasoning_effort", or OpenRouter's "reasoning":{"effort"}; goldens hold
// each form, and OpenAI's spec validates the Chat Completions ones.
func TestKnobs(t *testing.T) {
	t.Parallel()
	spec := providertest.SpecPath(t, "openai-openapi.yaml")
	tests := []struct {
		name        string
		p           *Protocol
		temperature *float64
		reasoning   string
		spec        bool // OpenRouter's reasoning object is not in OpenAI's spec
	}{
		{"knobs/temperature", New(), ptr(0.2), "", true},
		{"knobs/temperature-zero", New(), ptr(0), "", true},
		{"knobs/reasoning-low", New(), nil, "low", true},
		{"knobs/reasoning-high-temperature", New(), ptr(1), "high", true},
		{"knobs/openrouter-reasoning-medium", &Protocol{ReasoningObject: true}, ptr(0.7), "medium", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := tt.p.BuildRequest(knobRequest(t, tt.temperature, tt.reasoning))
			if err != nil {
				t.Fatal(err)
			}
			providertest.Golden(t, tt.name, body)
			if tt.spec {
				if err := providertest.ValidateSpec(t, spec, "CreateChatCompletionRequest", body); err != nil {
					t.Errorf("does not match the spec: %v", err)
				}
			}
		})
	}
	// The spec does check these fields: a level it does not know and a
	// temperature out of its range are refused.
	for _, bad := range []string{
		`{"model":"gpt-5","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"extreme"}`,
		`{"model":"gpt-5","messages":[{"role":"user","content":"hi"}],"temperature":2.5}`,
	} {
		if err := providertest.ValidateSpec(t, spec, "CreateChatCompletionRequest", []byte(bad)); err == nil {
			t.Errorf("the spec accepted %s", bad)
		}
	}
	if _, err := New().BuildRequest(knobRequest(t, nil, "extreme")); !errors.Is(err, providers.ErrKnob) {
		t.Errorf("reasoning \"extreme\": err = %v, want ErrKnob", err)
	}
}

// TestKnobsWithAttachment: a prompt with an image goes with --temperature,
// and with --reasoning (validated against the official spec).
func TestKnobsWithAttachment(t *testing.T) {
	t.Parallel()
	providertest.KnobsWithAttachment(t, New(), "gpt-5", spec)
}
