package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ask-cli/ask/internal/agents"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/hooks"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/prompts"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/tools"
)

// AgentToolName is the tool that starts a subagent.
const AgentToolName = "agent"

// generalAgent is the child run the agent tool starts without a name:
// the parent's settings, narrowed by nothing but the remainders.
const generalAgent = "general"

// family is a run's subagents: the definitions found, the children
// started, and what they used, which counts as the parent's.
type family struct {
	defs []agents.Definition
	// slots holds one token per child running (--max-agents).
	slots chan struct{}
	// prompter is the parent's, asking for one child at a time: children
	// running at once share one person and one terminal.
	prompter policy.Prompter

	mu       sync.Mutex
	children []records.Child
	usage    providers.Usage // the children's, together
	cost     float64
	// own is the parent's own usage so far, from its assistant events.
	own providers.Usage
	// Set when the parent starts: its id, where its runs are kept, the
	// step it is at, and its recorder.
	id      string
	history *history.Store
	step    func() int
	// show is the parent's Output.Observe: what a person is told of the
	// children too.
	show func(records.Event)
}

// child is what a child run keeps of its parent.
type child struct {
	parentID string
	// within are the definition's tools, nil when it names none.
	within *narrowing
}

// findAgents readies the agent tool where definitions are found, unless --no-agents, --no-tools, a
// replay, or the run is itself a child (a child starts no children).
func (r *Run) findAgents() {
	s := r.Settings
	if s.NoAgents.Value || s.NoTools.Value || r.env.Replay != nil || s.child != nil {
		return
	}
	defs, warnings := agents.Find(agents.Places(r.workdir, prompts.RepoRoot(r.workdir), r.configHome(), r.home()))
	for _, w := range warnings {
		r.note("warning: %s", w)
	}
	if len(defs) == 0 {
		// As the skill tool, the agent tool is offered only where there is
		// something to offer: every request declares it, and a run that
		// names no subagent keeps its first request as small as it was.
		return
	}
	if r.env.Verbose {
		r.note("subagents: %d found, at most %d at once: %s", len(defs), max(s.MaxAgents.Value, 1), strings.Join(agentNames(defs), ", "))
	}
	r.family = &family{defs: defs, slots: make(chan struct{}, max(s.MaxAgents.Value, 1))}
	if r.env.Prompter != nil {
		r.family.prompter = &oneAtATime{inner: r.env.Prompter}
	}
}

// agentTool is the agent tool, when the run may start children.
func (r *Run) agentTool() []tools.Tool {
	if r.family == nil {
		return nil
	}
	return []tools.Tool{agentTool{r}}
}

type agentTool struct{ r *Run }

// maxAgentList bounds the definitions the tool's description names.
const maxAgentList = 4 << 10

func (t agentTool) Info() tools.Info {
	var b strings.Builder
	b.WriteString("Hand a self-contained task to a subagent: a child run with this run's tools or fewer, which works on its own and answers with its result. " +
		"Give it everything it needs in prompt. Several may run at once.")
	if defs := t.r.family.defs; len(defs) > 0 {
		b.WriteString(" Subagents by name (leave name out for a general one):")
		for _, d := range defs {
			line := "\n- " + d.Name
			if d.Description != "" {
				line += ": " + strings.Join(strings.Fields(d.Description), " ")
			}
			if b.Len()+len(line) > maxAgentList {
				b.WriteString("\n(more not listed)")
				break
			}
			b.WriteString(line)
		}
	}
	return tools.Info{
		Name:        AgentToolName,
		Description: b.String(),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"prompt":{"type":"string","pattern":"\\S","description":"the task, whole"},` +
			`"name":{"type":"string","description":"the subagent's name, from this tool's list"}},` +
			`"required":["prompt"]}`),
		// The tool itself changes nothing: each of the child's calls is
		// put to the child's policy, which is never wider than this run's.
		Risk: tools.Read,
	}
}

func (t agentTool) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Prompt string `json:"prompt"`
		Name   string `json:"name"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", fmt.Errorf("agent: %v", err)
	}
	return t.r.startChild(ctx, args.Name, args.Prompt)
}

// startChild runs a child through New and Execute, the path of every run,
// with its settings carved from this run's (agents.Narrow), and answers
// with its answer.
func (r *Run) startChild(ctx context.Context, name, prompt string) (string, error) {
	f := r.family
	def := agents.Definition{Name: generalAgent}
	if name != "" && name != generalAgent {
		d, ok := agents.Lookup(f.defs, name)
		if !ok {
			return "", fmt.Errorf("agent: no subagent %q; choose one of %s", name, strings.Join(append([]string{generalAgent}, agentNames(f.defs)...), ", "))
		}
		def = d
	}
	select {
	case f.slots <- struct{}{}:
		defer func() { <-f.slots }()
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
	parent, err := r.carveParent()
	if err != nil {
		return "", err
	}
	c := agents.Narrow(parent, def)
	for _, w := range c.Warnings {
		r.note("warning: %s", w)
	}
	s := r.Settings
	s.Values = c.Values
	// What belongs to the parent's task stays with it: its conversation,
	// preloaded skills, attachments, answer schema and --until check.
	s.Conversation = nil
	s.Skills, s.Attach, s.Schema, s.Until = Setting[[]string]{}, Setting[[]string]{}, Setting[string]{}, Setting[string]{}
	s.child = &child{parentID: f.id}
	if c.Restricted {
		s.child.within = &narrowing{what: "the subagent " + def.Name + "'s tools", patterns: c.Within}
	}
	env := r.env
	env.Prompter = f.prompter
	if c.NoApprovals {
		env.Prompter, env.Confirm = nil, nil
	}
	cr, err := New(ctx, s, env)
	if err != nil {
		return "", fmt.Errorf("agent %s: %w", def.Name, err)
	}
	defer cr.Close()
	res := cr.Execute(ctx, prompt, Output{History: f.history, Observe: f.shown(def.Name)})
	f.add(records.Child{ID: res.ID, Name: def.Name, Status: res.Status, Usage: res.Usage, Cost: res.Usage.Cost})
	if r.hooks != nil {
		r.hooks.Run(context.WithoutCancel(ctx), hooks.SubagentStop, hooks.Input{AgentID: res.ID, AgentType: def.Name})
	}
	if res.Status != loop.StatusCompleted {
		why := res.Why
		if why == "" {
			why = res.Status
		}
		return "", fmt.Errorf("agent %s (run %s) did not complete: %s; its last text: %s", def.Name, res.ID, why, res.Answer)
	}
	return res.Answer, nil
}

// carveParent is what a child may have of this run now: its settings,
// the tools it offers, and what is left of its steps and budgets.
func (r *Run) carveParent() (agents.Parent, error) {
	f := r.family
	p := agents.Parent{Values: r.Settings.Values, LocalProgram: r.Provider.LocalProgram, StepsLeft: r.MaxSteps - f.step()}
	for _, t := range r.Declared {
		if t.Name != AgentToolName {
			p.Tools = append(p.Tools, t.Name)
		}
	}
	f.mu.Lock()
	spent := f.own.Add(f.usage)
	childCost := f.cost
	f.mu.Unlock()
	if tokens := r.Settings.MaxBudgetTokens.Value; tokens > 0 {
		if p.TokensLeft = tokens - spent.InputTokens - spent.OutputTokens; p.TokensLeft <= 0 {
			return p, fmt.Errorf("agent: the token budget (--max-budget-tokens %d) is used up", tokens)
		}
	}
	if usd := r.Settings.MaxBudgetUSD.Value; usd > 0 {
		own, _ := r.cost(f.ownUsage())
		if p.USDLeft = usd - own - childCost; p.USDLeft <= 0 {
			return p, fmt.Errorf("agent: the cost budget (--max-budget-usd %g) is used up", usd)
		}
	}
	if p.StepsLeft < 1 {
		return p, errors.New("agent: no steps are left for a subagent (--max-steps)")
	}
	return p, nil
}

// start readies the family for the run id, kept in store and shown by
// show.
func (f *family) start(id string, store *history.Store, step func() int, show func(records.Event)) {
	if f == nil {
		return
	}
	f.id, f.history, f.step, f.show = id, store, step, show
}

// shown passes on to the parent's watcher what a person must hear of a
// child (a denial, a change, a refused connection, a skill), the call's
// name prefixed with the child's; its other events stay in its own
// transcript.
func (f *family) shown(name string) func(records.Event) {
	if f.show == nil {
		return nil
	}
	return func(ev records.Event) {
		switch ev.Type {
		case records.TypeToolDenied, records.TypeSkillActivated:
			ev.Name = name + "/" + ev.Name
		case records.TypeFileChanged, records.TypeNetwork, records.TypeError:
		default:
			return
		}
		f.show(ev)
	}
}

// observe counts the parent's own usage, as its steps report it.
func (f *family) observe(ev records.Event) {
	if f == nil || ev.Type != records.TypeAssistant || ev.Usage == nil {
		return
	}
	f.mu.Lock()
	f.own = f.own.Add(*ev.Usage)
	f.mu.Unlock()
}

func (f *family) ownUsage() providers.Usage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.own
}

func (f *family) add(c records.Child) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.children = append(f.children, c)
	f.usage = f.usage.Add(c.Usage)
	if c.Cost != nil {
		f.cost += *c.Cost
	}
}

// Children are the children started, in the order they ended, with their
// usage together.
func (f *family) Children() ([]records.Child, providers.Usage, float64) {
	if f == nil {
		return nil, providers.Usage{}, 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.children), f.usage, f.cost
}

// configHome is $XDG_CONFIG_HOME, "" when it is not set or not absolute
// (the XDG spec says a relative one is ignored).
func (r *Run) configHome() string {
	if dir := r.env.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return dir
	}
	return ""
}

// oneAtATime puts one question at a time to a prompter.
type oneAtATime struct {
	mu    sync.Mutex
	inner policy.Prompter
}

func (p *oneAtATime) Approve(ctx context.Context, calls []policy.Pending) ([]policy.Answer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inner.Approve(ctx, calls)
}

func agentNames(defs []agents.Definition) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}
