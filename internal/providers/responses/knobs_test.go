package responses

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// TestKnobs: --temperature becomes "temperature" and --reasoning
// "reasoning":{"effort"}; goldens hold each form and CreateResponse of
// OpenAI's spec validates them.
func TestKnobs(t *testing.T) {
	t.Parallel()
	p := New()
	user, err := p.UserMessage("hi")
	if err != nil {
		t.Fatal(err)
	}
	temp := func(f float64) *float64 { return &f }
	tests := []struct {
		name        string
		temperature *float64
		reasoning   string
	}{
		{"knobs/temperature", temp(0.3), ""},
		{"knobs/reasoning-low", nil, "low"},
		{"knobs/reasoning-high-temperature", temp(1), "high"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := p.BuildRequest(providers.Request{Model: "gpt-5", Messages: []json.RawMessage{user}, Temperature: tt.temperature, Reasoning: tt.reasoning})
			if err != nil {
				t.Fatal(err)
			}
			providertest.Golden(t, tt.name, body)
			if err := validateCreateResponse(t, body); err != nil {
				t.Errorf("does not match the spec: %v", err)
			}
		})
	}
	if err := validateCreateResponse(t, []byte(`{"model":"gpt-5","input":[],"reasoning":{"effort":"extreme"}}`)); err == nil {
		t.Error("the spec accepted reasoning.effort \"extreme\"")
	}
	if _, err := p.BuildRequest(providers.Request{Model: "gpt-5", Reasoning: "max"}); !errors.Is(err, providers.ErrKnob) {
		t.Errorf("reasoning \"max\": err = %v, want ErrKnob", err)
	}
}

// TestKnobsWithAttachment: a prompt with an image goes with --temperature,
// and with --reasoning (validated against the official spec).
func TestKnobsWithAttachment(t *testing.T) {
	t.Parallel()
	providertest.KnobsWithAttachment(t, New(), "gpt-5", spec)
}
