package run

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// The budgets before each request: spent once the run has used them, the
// last step when one more request like the one before would reach them;
// a cost comes from the provider's report, else the config file's price.
func TestBudget(t *testing.T) {
	t.Parallel()
	cost := func(c float64) *float64 { return &c }
	step := func(in, out int, c *float64) providers.Usage {
		return providers.Usage{InputTokens: in, OutputTokens: out, Cost: c}
	}
	tests := []struct {
		name   string
		tokens int
		usd    float64
		prices map[string]config.Price
		steps  []providers.Usage // each request's usage, in order
		want   []string          // the state before each request after the first: "", "last" or "spent"
	}{
		{name: "no budget", steps: []providers.Usage{step(100, 20, nil)}, want: nil},
		{name: "tokens", tokens: 300, steps: []providers.Usage{step(100, 20, nil), step(100, 20, nil), step(100, 20, nil)},
			want: []string{"", "last", "spent"}},
		{name: "tokens spent at once", tokens: 100, steps: []providers.Usage{step(100, 20, nil)}, want: []string{"spent"}},
		{name: "reported cost", usd: 0.05, steps: []providers.Usage{step(10, 5, cost(0.02)), step(10, 5, cost(0.02)), step(10, 5, cost(0.02))},
			want: []string{"", "last", "spent"}},
		{name: "priced", usd: 0.01, prices: map[string]config.Price{"m": {Input: 10, Output: 50}},
			steps: []providers.Usage{step(300, 20, nil), step(300, 20, nil)}, // $0.004 each
			want:  []string{"", "last"}},
		{name: "reported cost wins over the price", usd: 0.01, prices: map[string]config.Price{"m": {Input: 1e6, Output: 1e6}},
			steps: []providers.Usage{step(300, 20, cost(0.001))}, want: []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &Run{ModelName: "m"}
			r.Settings.Values.MaxBudgetTokens = Given(tt.tokens, "flag --max-budget-tokens")
			r.Settings.Values.MaxBudgetUSD = Given(tt.usd, "flag --max-budget-usd")
			r.Settings.Prices = Given(tt.prices, "config")
			b := r.budget()
			if (b == nil) != (tt.want == nil) {
				t.Fatalf("budget func %v, want one: %v", b != nil, tt.want != nil)
			}
			var spent providers.Usage
			for i, want := range tt.want {
				spent = spent.Add(tt.steps[i])
				s := b(spent, tt.steps[i])
				got := ""
				switch {
				case s.Spent:
					got = "spent"
				case s.Last:
					got = "last"
				}
				if got != want || (got != "") != strings.Contains(s.Why, "budget") {
					t.Errorf("before request %d: %q (%s), want %q", i+2, got, s.Why, want)
				}
			}
		})
	}
}

// A cost budget needs a cost it can know, before any request.
func TestCheckBudget(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		reports bool
		prices  map[string]config.Price
		ok      bool
	}{
		{"provider reports cost", true, nil, true},
		{"config price", false, map[string]config.Price{"m": {Input: 1, Output: 2}}, true},
		{"another model's price", false, map[string]config.Price{"n": {Input: 1, Output: 2}}, false},
		{"nothing", false, nil, false},
	} {
		r := &Run{ModelName: "m", Provider: catalog.Provider{Name: "p", ReportsCost: tt.reports}}
		r.Settings.Values.MaxBudgetUSD = Given(1.0, "flag --max-budget-usd")
		r.Settings.Prices = Given(tt.prices, "config")
		err := r.checkBudget()
		if (err == nil) != tt.ok {
			t.Errorf("%s: %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && ExitCode(err) != 2 {
			t.Errorf("%s: exit %d, want 2", tt.name, ExitCode(err))
		}
	}
}
