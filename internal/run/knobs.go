package run

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

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
	if level != "" {
		switch {
		case !slices.Contains(providers.ReasoningLevels, level):
			return fault.Usagef("--reasoning %q (%s): choose %s", level, s.Reasoning.Source, strings.Join(providers.ReasoningLevels, ", "))
		case row.Reasoning == "":
			return fault.Usagef("--reasoning: %s has no reasoning setting; choose a reasoning model by name instead, or leave it out", row.Name)
		}
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

// checkTier refuses a --tier the provider does not offer, naming those
// that do: a cheaper tier silently dropped would bill the full price.
func (s Settings) checkTier(row catalog.Provider) error {
	tier := s.Tier.Value
	switch {
	case tier == "":
		return nil
	case !slices.Contains(providers.Tiers, tier):
		return fault.Usagef("--tier %q (%s): choose %s", tier, s.Tier.Source, strings.Join(providers.Tiers, " or "))
	case !slices.Contains(row.Tiers, tier):
		return fault.Usagef("--tier %s (%s): %s has no %s tier; the providers that do: %s", tier, s.Tier.Source, row.Name, tier,
			strings.Join(catalog.WithTier(tier), ", "))
	}
	return nil
}

// priceRate is what the run's requests cost as a share of the listed
// price: its tier's rate, where the provider documents one, times the
// rate the run is given (a batch engine's discount).
func (r *Run) priceRate() float64 {
	rate := 1.0
	if tr, ok := r.Provider.TierPriceRates[r.Settings.Tier.Value]; ok {
		rate = tr
	}
	if r.env.PriceRate > 0 {
		rate *= r.env.PriceRate
	}
	return rate
}

// flexWait is the longest wait for a flex reply's headers: OpenAI's flex
// guide raises its SDKs' timeout to 15 minutes, since flex requests queue.
const flexWait = 15 * time.Minute

// flexClient is c with room for flex's queue: a transport that would give
// up on a reply's headers sooner, or a client timeout shorter, is
// lengthened to flexWait. A client whose transport is not an
// *http.Transport (a replay, a batch engine) is left as it is.
func flexClient(c *http.Client) *http.Client {
	if c == nil {
		return nil // http.DefaultClient, which has no timeout
	}
	out := *c
	if out.Timeout > 0 && out.Timeout < flexWait {
		out.Timeout = flexWait
	}
	if t, ok := c.Transport.(*http.Transport); ok && t.ResponseHeaderTimeout > 0 && t.ResponseHeaderTimeout < flexWait {
		t = t.Clone()
		t.ResponseHeaderTimeout = flexWait
		out.Transport = t
	}
	return &out
}
