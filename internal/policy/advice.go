package policy

import (
	"context"

	"github.com/ask-cli/ask/internal/providers"
)

// Advisor is asked about the calls of a step before the rules: the user's
// PreToolUse hooks (DESIGN §5). It returns one Advice per call.
type Advisor interface {
	Advise(ctx context.Context, calls []providers.ToolCall) []Advice
}

// Advice is what an Advisor said of one call.
type Advice struct {
	// Decision is AdviseAllow, AdviseDeny, AdviseAsk or "" for nothing.
	Decision string
	Reason   string
}

// Advice decisions.
const (
	// AdviseAllow counts as an allow rule: it never overrides --safe, a
	// deny rule, a read-only mode, a line no rule can judge while a deny
	// rule names the tool, or a write into version control.
	AdviseAllow = "allow"
	// AdviseDeny denies, whatever allows the call.
	AdviseDeny = "deny"
	// AdviseAsk needs a person (or --yes), whatever allow rule or
	// "always" would allow the call.
	AdviseAsk = "ask"
	// AdviseDefer pauses the call for `ask resume`, whatever allows it; a
	// deny still wins.
	AdviseDefer = "defer"
)

// advise asks the policy's Advisor, if any, about the calls.
func (p *Policy) advise(ctx context.Context, calls []providers.ToolCall) []Advice {
	out := make([]Advice, len(calls))
	if p.Advisor == nil {
		return out
	}
	copy(out, p.Advisor.Advise(ctx, calls))
	return out
}
