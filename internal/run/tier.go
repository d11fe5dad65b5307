package run

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// checkTier refuses a --tier the provider does not offer, naming those
// that do: a cheaper tier silently dropped would bill the full price. The
// tier itself is the row's to check (package settings).
func (s Settings) checkTier(row catalog.Provider) error {
	tier := s.Tier.Value
	switch {
	case tier == "":
		return nil
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
// lengthened to flexWait. A transport that is not an *http.Transport (a
// replay's, a batch engine's) keeps its own limits.
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
