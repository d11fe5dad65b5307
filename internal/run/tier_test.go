package run

import (
	"net/http"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// TestFlexClient: flex's queue gets 15 minutes for a reply's headers and
// the whole request, where the client would give up sooner; a longer
// limit, no limit, or a transport that is not ask's own is left alone.
func TestFlexClient(t *testing.T) {
	t.Parallel()
	short := providers.NewTransport(providers.DefaultNet) // 5 minutes for the headers
	c := flexClient(&http.Client{Transport: short, Timeout: time.Minute})
	if got := c.Transport.(*http.Transport).ResponseHeaderTimeout; got != flexWait {
		t.Errorf("header wait %v, want %v", got, flexWait)
	}
	if c.Timeout != flexWait {
		t.Errorf("timeout %v, want %v", c.Timeout, flexWait)
	}
	if short.ResponseHeaderTimeout != providers.DefaultNet.ResponseHeader {
		t.Error("the shared transport was changed")
	}
	long := providers.NewTransport(providers.NetTimeouts{ResponseHeader: time.Hour})
	if got := flexClient(&http.Client{Transport: long}).Transport; got != long {
		t.Error("a transport that waits longer was replaced")
	}
	other := roundTripper(func(*http.Request) (*http.Response, error) { return nil, nil })
	if c := flexClient(&http.Client{Transport: other}); c.Timeout != 0 {
		t.Errorf("a client without a timeout got %v", c.Timeout)
	}
	if flexClient(nil) != nil {
		t.Error("nil (http.DefaultClient, no limit) became a client")
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPriceRate: a request's cost from the config file's prices is at the
// tier's documented rate times the rate the run is given (a batch
// engine's); the provider's own figure is taken as it is.
func TestPriceRate(t *testing.T) {
	t.Parallel()
	openai, _ := catalog.Lookup("openai")
	responses, _ := catalog.Lookup("openai-responses")
	u := providers.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}
	tests := []struct {
		name string
		row  catalog.Provider
		tier string
		env  Env
		want float64
		tag  string
	}{
		{"listed", openai, "", Env{}, 2, ""},
		{"flex", openai, providers.TierFlex, Env{}, 1, "flex"},
		{"background is the listed price", responses, providers.TierBackground, Env{}, 2, "background"},
		{"batch", openai, "", Env{PriceRate: 0.5, Billing: "batch"}, 1, "batch"},
	}
	for _, tt := range tests {
		s := defaults()
		s.Tier = Given(tt.tier, "flag --tier")
		s.Prices = Given(map[string]config.Price{"m": {Input: 1, Output: 10}}, "config")
		r := &Run{Settings: s, Provider: tt.row, ModelName: "m", env: tt.env}
		if got, ok := r.cost(u); !ok || got != tt.want {
			t.Errorf("%s: cost %v %v, want %v", tt.name, got, ok, tt.want)
		}
		tier, rate := r.billing()
		if tier != tt.tag || (tier == "") != (rate == nil) {
			t.Errorf("%s: billed as %q at %v", tt.name, tier, rate)
		}
		reported := 0.25
		if got, _ := r.cost(providers.Usage{Cost: &reported}); got != reported {
			t.Errorf("%s: the provider's own cost became %v", tt.name, got)
		}
	}
}
