package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

// A run that deferred calls (DESIGN §9, Pauses) ends with status
// deferred: its run.finished carries the conversation up to the step's
// calls and the step itself (records.Paused). `ask resume` builds a run
// the usual way, from this invocation's flags over the conversation
// (Inputs.Paused), and Execute carries the deferred one on under the same
// id: each waiting call is put to this run's policy (its rules, --safe,
// its sandbox, its hooks, run again) with the decisions the command was
// given, and the events follow the deferred run.finished in the same
// transcript. Nothing in a transcript is a grant: it only says which
// calls wait.

// Decisions are what `ask resume` was told about the calls a run waits
// on: --approve and --deny, by call id or all.
type Decisions struct {
	approve    map[string]bool
	approveAll bool
	deny       map[string]string // call id → the reviewer's reason, "" for none
	denyAll    bool
	denyReason string // --deny all=REASON's
}

// ParseDecisions reads --approve CALL|all and --deny CALL[=REASON]|all.
func ParseDecisions(approve, deny []string) (*Decisions, error) {
	d := &Decisions{approve: map[string]bool{}, deny: map[string]string{}}
	for _, a := range approve {
		switch id := strings.TrimSpace(a); {
		case id == "":
			return nil, fault.Usagef("--approve: give a call id, or all")
		case id == "all":
			d.approveAll = true
		default:
			d.approve[id] = true
		}
	}
	for _, v := range deny {
		id, reason, _ := strings.Cut(v, "=")
		id = strings.TrimSpace(id)
		switch {
		case id == "":
			return nil, fault.Usagef("--deny %q: give a call id, or all, then =REASON if you like", v)
		case id == "all":
			d.denyAll, d.denyReason = true, reason
		default:
			d.deny[id] = reason
		}
	}
	if d.approveAll && d.denyAll {
		return nil, fault.Usagef("--approve all and --deny all contradict each other: name the calls of one of them")
	}
	for id := range d.approve {
		if _, ok := d.deny[id]; ok {
			return nil, fault.Usagef("--approve %s and --deny %s name the same call: choose one", id, id)
		}
	}
	return d, nil
}

// check refuses a decision about a call the run does not wait on: a
// mistyped id must not leave the call it meant undecided unnoticed.
func (d *Decisions) check(waiting []records.Deferred) error {
	ids := make([]string, len(waiting))
	for i, w := range waiting {
		ids[i] = w.ID
	}
	for _, named := range [][]string{sortedKeys(d.approve), sortedKeys(d.deny)} {
		for _, id := range named {
			if !slices.Contains(ids, id) {
				return fault.Usagef("the run does not wait on a call %q: it waits on %s", id, strings.Join(ids, ", "))
			}
		}
	}
	return nil
}

// denied reports whether the reviewer denied the call, with the reason
// the model is given.
func (d *Decisions) denied(id string) (string, bool) {
	reason, ok := d.deny[id]
	if !ok && d.denyAll && !d.approve[id] {
		reason, ok = d.denyReason, true
	}
	if !ok {
		return "", false
	}
	if reason == "" {
		return "denied at ask resume", true
	}
	return "denied at ask resume: " + reason, true
}

func (d *Decisions) approved(id string) bool {
	_, denied := d.deny[id]
	return d.approve[id] || d.approveAll && !denied
}

// resolving makes the policy one that decides deferred calls: a call the
// reviewer denied is denied before anything else; every other goes to the
// policy, whose approval question the decisions answer (a person at the
// terminal, if any, answers what they leave open; else the call stays
// deferred).
func (d *Decisions) resolving(pol *policy.Policy) loop.Gate {
	pol.Resolving = true
	pol.Prompter = decisionPrompter{d, pol.Prompter}
	return decisionGate{d, pol}
}

type decisionGate struct {
	d   *Decisions
	pol *policy.Policy
}

func (g decisionGate) Check(ctx context.Context, calls []providers.ToolCall) []policy.Verdict {
	out := make([]policy.Verdict, len(calls))
	var rest []providers.ToolCall
	var at []int
	for i, c := range calls {
		if reason, ok := g.d.denied(c.ID); ok {
			out[i] = policy.Verdict{Reason: reason}
			continue
		}
		rest, at = append(rest, c), append(at, i)
	}
	if len(rest) > 0 {
		for k, v := range g.pol.Check(ctx, rest) {
			out[at[k]] = v
		}
	}
	return out
}

// decisionPrompter answers the approval question with --approve; what it
// leaves open goes to the person at the terminal, or waits.
type decisionPrompter struct {
	d    *Decisions
	next policy.Prompter // nil without a terminal
}

func (p decisionPrompter) Approve(ctx context.Context, calls []policy.Pending) ([]policy.Answer, error) {
	out := make([]policy.Answer, len(calls))
	var open []policy.Pending
	var at []int
	for i, c := range calls {
		switch {
		case p.d.approved(c.ID):
			out[i] = policy.Yes
		case p.next != nil:
			open, at = append(open, c), append(at, i)
		default:
			out[i] = policy.Later
		}
	}
	if len(open) == 0 {
		return out, nil
	}
	answers, err := p.next.Approve(ctx, open)
	if err != nil {
		return nil, err
	}
	for k, i := range at {
		if k < len(answers) {
			out[i] = answers[k]
		}
	}
	return out, nil
}

// checkDecisions checks that decisions come only with the deferred run
// they are about, and name only calls it waits on.
func checkDecisions(s Settings, env Env) error {
	c := s.Conversation
	paused := c != nil && c.paused != nil
	switch {
	case env.Decisions == nil && paused:
		return errors.New("a deferred run is carried on with decisions (ask resume)")
	case env.Decisions == nil:
		return nil
	case !paused:
		return fault.Usagef("--approve and --deny decide the calls of a deferred run: name it with ask resume ID|last")
	}
	return env.Decisions.check(c.paused.end.Deferred)
}

// readDeferred reads the transcript of a run that stopped deferred, for
// Execute to carry on.
func readDeferred(transcript []byte) (*pendingRun, error) {
	events, err := readRun(transcript)
	if err != nil {
		return nil, err
	}
	start, end := events[0], events[len(events)-1]
	switch {
	case end.Type != records.TypeRunFinished:
		return nil, fmt.Errorf("run %s did not finish (its transcript has no run.finished at its end), so it is not deferred", start.ID)
	case end.Status != loop.StatusDeferred:
		return nil, fmt.Errorf("run %s is not deferred (its status is %s): ask resume carries on only a run that waits on deferred calls; ask --resume %s continues a finished one", start.ID, end.Status, start.ID)
	case len(end.History) == 0 || end.Steps < 1 || end.Paused == nil:
		return nil, fmt.Errorf("run %s is deferred but its run.finished holds no conversation or paused step", start.ID)
	}
	if err := end.Paused.Check(); err != nil {
		return nil, fmt.Errorf("run %s: %w", start.ID, err)
	}
	// The list of waiting calls is the paused step's own, whatever the
	// event's deferred list says.
	end.Deferred = waitingCalls(end.Paused, end.Deferred)
	return &pendingRun{id: start.ID, transcript: transcript, start: start, end: end}, nil
}

// waitingCalls lists the paused step's waiting calls, with the reason
// the transcript gives each where it names it.
func waitingCalls(p *records.Paused, said []records.Deferred) []records.Deferred {
	out := make([]records.Deferred, len(p.Deferred))
	for k, i := range p.Deferred {
		c := p.Calls[i]
		out[k] = records.Deferred{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		for _, s := range said {
			if s.ID == c.ID {
				out[k].Reason = s.Reason
			}
		}
	}
	return out
}

// Waiting are the calls the deferred run being resumed waits on; nil for
// any other run.
func (r *Run) Waiting() []records.Deferred {
	if c := r.Settings.Conversation; c != nil && c.paused != nil {
		return c.paused.end.Deferred
	}
	return nil
}

// resume carries on the deferred run the settings' conversation holds:
// every sink of out gets its transcript first, then what follows.
func (r *Run) resume(ctx context.Context, out Output) *Result {
	prev := r.Settings.Conversation.paused
	for _, w := range out.Sinks {
		if w != nil {
			w.Write(prev.transcript)
		}
	}
	return r.execute(ctx, "", out, prev, nil)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
