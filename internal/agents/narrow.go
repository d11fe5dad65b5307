package agents

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/settings"
)

// Parent is what a child run is carved from.
type Parent struct {
	// Values are the parent run's settings, resolved.
	Values settings.Values
	// Tools are the names of the tools the parent offers.
	Tools []string
	// LocalProgram: the parent's model is a program on this machine
	// (--provider command), to which a model name would be passed on.
	LocalProgram bool
	// StepsLeft is the most steps the child may take; TokensLeft and
	// USDLeft what is left of the parent's budgets (0: it has none).
	StepsLeft  int
	TokensLeft int
	USDLeft    float64
}

// Child is the child run's settings and what narrows them further.
type Child struct {
	Values settings.Values
	// Within, when Restricted, are the only calls the child may make (its
	// definition's tools); the parent's rules still decide each of them.
	Within     []policy.Pattern
	Restricted bool
	// NoApprovals: no person is asked for the child's calls
	// (permissionMode dontAsk): what needs approval is denied.
	NoApprovals bool
	// Warnings say what the definition asked for and did not get.
	Warnings []string
}

// modeRank orders the modes from the narrowest.
var modeRank = map[string]int{policy.ModeAsk: 0, policy.ModePlan: 1, policy.ModeAgent: 2}

// claudeAliases are Claude Code's model names, which mean nothing to
// another provider: the child keeps its parent's model.
var claudeAliases = []string{"sonnet", "opus", "haiku", "inherit"}

// Narrow carves the child's settings from the parent's by the definition.
// Every setting is the parent's or narrower: deny rules add, the tools are
// a subset of the parent's, the mode, --safe, --yes, --accept-edits, the
// sandbox, hooks and the provider stay the parent's or narrower, and the
// steps and budgets are at most what the parent has left. What the
// definition asks beyond that is clipped with a warning naming it.
// (Until the settings rows carry widening marks, this is the one place a
// definition meets the settings.)
func Narrow(p Parent, d Definition) Child {
	c := Child{Values: p.Values}
	v := &c.Values
	warn := func(format string, args ...any) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("agent %s: ", d.Name)+fmt.Sprintf(format, args...))
	}
	deny, unread := policy.ToolList(d.Disallowed)
	for _, e := range unread {
		warn("disallowedTools %q is not a tool name; write NAME or NAME(ARGUMENT-PREFIX:*)", e)
	}
	v.Deny = settings.Given(append(slices.Clone(p.Values.Deny.Value), policy.Strings(deny)...), "agent definition "+d.Path)
	if d.toolsGiven {
		within, unread := policy.ToolList(d.Tools)
		for _, e := range unread {
			warn("tools %q is not a tool name: left out", e)
		}
		for _, pat := range within {
			byName, _ := policy.ParsePattern(pat.Name())
			if !slices.ContainsFunc(p.Tools, func(name string) bool { return byName.Match(name, "") }) {
				warn("tools %q names no tool the parent run offers: left out (a definition cannot add a tool)", pat.String())
			}
		}
		c.Within, c.Restricted = within, true
	}
	switch pm := d.PermissionMode; pm {
	case "", "default":
	case "plan":
		if modeRank[v.Mode.Value] > modeRank[policy.ModePlan] {
			v.Mode = settings.Given(policy.ModePlan, "agent definition "+d.Path)
		}
	case "dontAsk":
		c.NoApprovals = true
	case "acceptEdits":
		if !p.Values.AcceptEdits.Value {
			warn("permissionMode acceptEdits clipped: the parent run asks before edits (give --accept-edits to the parent)")
		}
	case "bypassPermissions":
		warn("permissionMode bypassPermissions clipped: the child asks as its parent does")
	default:
		warn("permissionMode %q is not known: ignored", pm)
	}
	c.narrowModel(p, d, warn)
	steps := p.StepsLeft
	if d.MaxTurns > 0 && d.MaxTurns < steps {
		steps = d.MaxTurns
	}
	v.MaxSteps = settings.Given(max(steps, 1), "the parent run's remaining steps")
	if p.TokensLeft > 0 {
		v.MaxBudgetTokens = settings.Given(p.TokensLeft, "the parent run's remaining budget")
	}
	if p.USDLeft > 0 {
		v.MaxBudgetUSD = settings.Given(p.USDLeft, "the parent run's remaining budget")
	}
	if d.Prompt != "" {
		v.System = settings.Given(strings.TrimSpace(p.Values.System.Value+"\n\n"+d.Prompt), "agent definition "+d.Path)
	}
	return c
}

// narrowModel lets a definition choose another model of the parent's
// provider, never another provider, and never a name passed on to a local
// program.
func (c *Child) narrowModel(p Parent, d Definition, warn func(string, ...any)) {
	m := d.Model
	switch {
	case m == "" || slices.Contains(claudeAliases, m):
		return
	case p.LocalProgram:
		warn("model %q clipped: the parent's model is a local program, which keeps its own", m)
	case isProvider(m) || strings.Contains(m, ":") && isProvider(strings.SplitN(m, ":", 2)[0]):
		warn("model %q clipped: it names a provider, and a child keeps its parent's (%s)", m, p.Values.Provider.Value)
	default:
		c.Values.Model = settings.Given(m, "agent definition "+d.Path)
	}
}

func isProvider(name string) bool {
	_, err := catalog.Lookup(name)
	return err == nil
}
