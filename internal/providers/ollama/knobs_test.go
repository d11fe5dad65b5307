package ollama

import (
	"errors"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// TestKnobs: --temperature becomes options.temperature and --reasoning
// "think" with a level; goldens hold each form and ChatRequest of Ollama's
// spec validates them.
func TestKnobs(t *testing.T) {
	t.Parallel()
	spec := providertest.SpecPath(t, "ollama-openapi.yaml")
	temp := func(f float64) *float64 { return &f }
	tests := []struct {
		name        string
		temperature *float64
		reasoning   string
	}{
		{"knobs/temperature", temp(0.8), ""},
		{"knobs/think-high", nil, "high"},
		{"knobs/think-low-temperature", temp(0), "low"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := recordedRequest(t, "fantasy-pr63-gptoss120b-tool.request.json")
			r.Temperature, r.Reasoning = tt.temperature, tt.reasoning
			body, err := New().BuildRequest(r)
			if err != nil {
				t.Fatal(err)
			}
			providertest.Golden(t, tt.name, body)
			if err := providertest.ValidateSpec(t, spec, chatRequestSchema, body); err != nil {
				t.Errorf("does not match the spec: %v", err)
			}
		})
	}
	for _, bad := range []string{
		`{"model":"m","messages":[],"think":"extreme"}`,
		`{"model":"m","messages":[],"options":{"temperature":"hot"}}`,
	} {
		if err := providertest.ValidateSpec(t, spec, chatRequestSchema, []byte(bad)); err == nil {
			t.Errorf("the spec accepted %s", bad)
		}
	}
	if _, err := New().BuildRequest(providers.Request{Model: "m", Reasoning: "max"}); !errors.Is(err, providers.ErrKnob) {
		t.Errorf("reasoning \"max\": err = %v, want ErrKnob", err)
	}
}

// TestKnobsWithAttachment: a prompt with an image goes with --temperature,
// and with --reasoning (validated against the official spec).
func TestKnobsWithAttachment(t *testing.T) {
	t.Parallel()
	providertest.KnobsWithAttachment(t, New(), "qwen3", spec)
}
