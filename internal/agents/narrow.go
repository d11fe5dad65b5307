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

// claudeAliases are Claude Code's model names, which mean nothing to
// another provider: the child keeps its parent's model.
var claudeAliases = []string{"sonnet", "opus", "haiku", "inherit"}

// Narrow carves the child's settings from the parent's by the definition.
// What the definition says becomes a lower layer laid over the parent's
// settings by settings.NarrowValues, the one way a lower layer is applied:
// deny rules add, the mode only gets stricter, --yes and --accept-edits
// stay the parent's, the steps and budgets are at most what the parent has
// left. A key it refuses as widening is clipped with a warning naming it,
// and the rest of the definition still applies. The tools are a subset of
// the parent's (Within); the provider is always the parent's.
func Narrow(p Parent, d Definition) Child {
	c := Child{Values: p.Values}
	source := "agent definition " + d.Path
	warn := func(format string, args ...any) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("agent %s: ", d.Name)+fmt.Sprintf(format, args...))
	}
	// give lays one setting, for what the definition says, over what the
	// child has so far, or clips it.
	give := func(what, name string, value any) {
		var layer settings.Values
		if err := layer.Give(name, value, source); err != nil {
			warn("%s left out: %v", what, err)
			return
		}
		narrowed, err := settings.NarrowValues(c.Values, layer)
		if err != nil {
			warn("%s clipped: %v", what, err)
			return
		}
		c.Values = narrowed
	}
	deny, unread := policy.ToolList(d.Disallowed)
	for _, e := range unread {
		warn("disallowedTools %q is not a tool name; write NAME or NAME(ARGUMENT-PREFIX:*)", e)
	}
	if len(deny) > 0 {
		give("disallowedTools", "deny-tool", policy.Strings(deny))
	}
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
		if c.Values.Mode.Value == policy.ModeAgent {
			give("permissionMode plan", "mode", policy.ModePlan)
		}
	case "dontAsk":
		c.NoApprovals = true
	case "acceptEdits":
		give("permissionMode acceptEdits", "accept-edits", true)
	case "bypassPermissions":
		give("permissionMode bypassPermissions", "yes", true)
	default:
		warn("permissionMode %q is not known: ignored", pm)
	}
	c.narrowModel(p, d, warn, give)
	steps := p.StepsLeft
	if d.MaxTurns > 0 && d.MaxTurns < steps {
		steps = d.MaxTurns
	}
	give("maxTurns", "max-steps", max(steps, 1))
	if p.TokensLeft > 0 {
		give("the parent's budget", "max-budget-tokens", p.TokensLeft)
	}
	if p.USDLeft > 0 {
		give("the parent's budget", "max-budget-usd", p.USDLeft)
	}
	if d.Prompt != "" {
		give("the instructions", "system", strings.TrimSpace(p.Values.System.Value+"\n\n"+d.Prompt))
	}
	return c
}

// narrowModel lets a definition choose another model of the parent's
// provider, never another provider, and never a name passed on to a local
// program.
func (c *Child) narrowModel(p Parent, d Definition, warn func(string, ...any), give func(what, name string, value any)) {
	m := d.Model
	switch {
	case m == "" || slices.Contains(claudeAliases, m):
		return
	case p.LocalProgram:
		warn("model %q clipped: the parent's model is a local program, which keeps its own", m)
	case isProvider(m) || strings.Contains(m, ":") && isProvider(strings.SplitN(m, ":", 2)[0]):
		warn("model %q clipped: it names a provider, and a child keeps its parent's (%s)", m, p.Values.Provider.Value)
	default:
		give("model "+m, "model", m)
	}
}

func isProvider(name string) bool {
	_, err := catalog.Lookup(name)
	return err == nil
}
