package run

import (
	"errors"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// checkKnobs refuses --temperature and --reasoning where the provider has
// no such setting, or a value out of its range, before anything is sent:
// a knob silently dropped would make a run look tuned when it was not.
// What depends on the model or on the two together (a Gemini model that
// does not think, Anthropic's thinking with a temperature) the protocol
// knows; a request built with nothing else in it asks it.
func (s Settings) checkKnobs(row catalog.Provider, proto providers.Protocol, model string) error {
	t, level := s.Temperature, s.Reasoning.Value
	if t.IsGiven() {
		switch {
		case row.MaxTemperature == 0:
			return fault.Usagef("--temperature: %s takes no temperature; leave it out", row.Name)
		case t.Value < 0 || t.Value > row.MaxTemperature:
			return fault.Usagef("--temperature %g (%s): %s takes 0 to %g", t.Value, t.Source, row.Name, row.MaxTemperature)
		}
	}
	// The level itself is the row's to check (package settings).
	if level != "" && row.Reasoning == "" {
		return fault.Usagef("--reasoning: %s has no reasoning setting; choose a reasoning model by name instead, or leave it out", row.Name)
	}
	if err := s.checkTier(row); err != nil {
		return err
	}
	if (!t.IsGiven() && level == "" && s.Tier.Value == "") || proto == nil {
		return nil
	}
	_, err := proto.BuildRequest(providers.Request{Model: model, Temperature: s.temperature(), Reasoning: level, Tier: s.Tier.Value})
	if errors.Is(err, providers.ErrKnob) {
		return fault.Usagef("%v", err)
	}
	return nil
}

// temperature is the temperature to send, nil for the provider's own.
func (s Settings) temperature() *float64 {
	if !s.Temperature.IsGiven() {
		return nil
	}
	t := s.Temperature.Value
	return &t
}
