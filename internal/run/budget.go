package run

import (
	"fmt"

	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
)

// price is what the run's model costs per million tokens, from the config
// file's prices; ok is false when the file names no price for it.
func (r *Run) price() (config.Price, bool) {
	p, ok := r.Settings.Prices.Value[r.ModelName]
	return p, ok
}

// checkBudget refuses, before any request, a cost budget for a model whose
// cost cannot be known: its provider reports none and the config file
// gives no price.
func (r *Run) checkBudget() error {
	s := r.Settings
	if !s.MaxBudgetUSD.IsGiven() || s.MaxBudgetUSD.Value <= 0 {
		return nil
	}
	if _, ok := r.price(); ok || r.Provider.ReportsCost {
		return nil
	}
	return fault.Usagef("--max-budget-usd: the cost of %s on %s cannot be known: %s reports no cost; give its price in the config file, as \"prices\": {%q: {\"input\": USD, \"output\": USD}} per million tokens",
		r.ModelName, r.Provider.Name, r.Provider.Name, r.ModelName)
}

// cost is what a request cost: the provider's own figure, else its tokens
// at the config file's price and the run's price rate (a cheaper tier, a
// batch engine); ok is false when neither is known.
func (r *Run) cost(u providers.Usage) (usd float64, ok bool) {
	if u.Cost != nil {
		return *u.Cost, true
	}
	p, ok := r.price()
	if !ok {
		return 0, false
	}
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output) / 1e6 * r.priceRate(), true
}

// runCost is the cost of a run that used u: the provider's own figure,
// else its tokens at the config file's price and the run's rate; nil
// when neither is known.
func (r *Run) runCost(u providers.Usage) *float64 {
	c, ok := r.cost(u)
	if !ok {
		return nil
	}
	return &c
}

// billing is how the run's requests are billed, for run.finished: the
// tier ("flex", "batch"), "" for the listed price, and the rate the cost
// was taken at.
func (r *Run) billing() (tier string, rate *float64) {
	tier = r.Settings.Tier.Value
	if r.env.Billing != "" {
		tier = r.env.Billing
	}
	if tier == "" {
		return "", nil
	}
	v := r.priceRate()
	return tier, &v
}

// budget is the loop's Budget for --max-budget-tokens and
// --max-budget-usd, nil when neither is given. A budget is spent once the
// run has used it; the request before that is the last step when one
// more request like the one before it would reach it.
func (r *Run) budget() func(spent, last providers.Usage) loop.BudgetState {
	tokens, usd := r.Settings.MaxBudgetTokens.Value, r.Settings.MaxBudgetUSD.Value
	if tokens <= 0 && usd <= 0 {
		return nil
	}
	var costSoFar float64
	return func(spent, last providers.Usage) loop.BudgetState {
		// What the subagents used is the run's too.
		_, childUsage, childCost := r.family.Children()
		spent = spent.Add(childUsage)
		if tokens > 0 {
			used, next := spent.InputTokens+spent.OutputTokens, last.InputTokens+last.OutputTokens
			if used >= tokens {
				return loop.BudgetState{Spent: true, Why: fmt.Sprintf("the token budget (--max-budget-tokens %d) is used up: %d tokens", tokens, used)}
			}
			if used+next >= tokens {
				return loop.BudgetState{Last: true, Why: fmt.Sprintf("the token budget (--max-budget-tokens %d) leaves no room for another step after %d tokens", tokens, used)}
			}
		}
		if usd > 0 {
			// Each request's cost is counted once, as it comes.
			c, _ := r.cost(last)
			costSoFar += c
			total := costSoFar + childCost
			if total >= usd {
				return loop.BudgetState{Spent: true, Why: fmt.Sprintf("the cost budget (--max-budget-usd %g) is used up: $%.4f", usd, total)}
			}
			if total+c >= usd {
				return loop.BudgetState{Last: true, Why: fmt.Sprintf("the cost budget (--max-budget-usd %g) leaves no room for another step after $%.4f", usd, total)}
			}
		}
		return loop.BudgetState{}
	}
}
