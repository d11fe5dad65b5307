// Package policy decides, for each tool call, whether it may run: the mode
// (ask, plan, agent), the opt-in --safe profile, --allow-tool and --deny-tool
// patterns, and approval gates that ask a person through a Prompter. It
// implements the loop's Gate and filters what is declared to the model; the
// loop imports it, never the reverse.
package policy

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

// Modes.
const (
	ModeAsk   = "ask"
	ModePlan  = "plan"
	ModeAgent = "agent"
)

// Step limits of DESIGN §5. Real agent runs take 20–90 steps, so agent
// mode's default leaves room for them; a plan needs fewer; ask mode is a
// question, bounded whatever --max-steps says.
const (
	AgentModeMaxSteps = 100
	PlanModeMaxSteps  = 20
	AskModeMaxSteps   = 3
)

// DefaultMaxSteps is --max-steps when nothing sets it, for a mode ("" is
// agent, the default mode).
func DefaultMaxSteps(mode string) int {
	switch mode {
	case ModeAsk:
		return AskModeMaxSteps
	case ModePlan:
		return PlanModeMaxSteps
	default:
		return AgentModeMaxSteps
	}
}

// ValidMode reports whether m names a mode.
func ValidMode(m string) bool { return m == ModeAsk || m == ModePlan || m == ModeAgent }

// Prompter asks a person to approve calls. Approve returns one answer per
// call.
type Prompter interface {
	Approve(ctx context.Context, calls []Pending) ([]Answer, error)
}

// Pending is a call waiting for approval, described for a person.
type Pending struct {
	// ID is the call's id, as the model gave it, which `ask resume
	// --approve` names.
	ID      string
	Name    string
	Summary string // the call's main argument, such as a shell command
	// Args are the call's other arguments, by name, so that what is
	// approved is seen whole (a write's content, an edit's texts, a
	// command's time limit). Nil when Summary already shows them all.
	Args []Arg
	Risk tools.Risk
	// Always says what the answer Always approves for the rest of the run,
	// to be shown with it ("[a]lways any go test"): for the shell tool,
	// the program and subcommand of each command in the line, whatever
	// their arguments ("any go test, any go vet"); for the file tools,
	// every edit inside the working directory; for another tool, any call
	// of it. It is "" when Always can approve nothing beyond this call (a
	// command line that cannot be judged statically); Always is then a
	// yes to this call alone.
	Always string
	// Replaces is the content of the file a write replaces, so that the
	// question can show the write as a change; Replacing is false for a
	// new file, and for a call that is not a write.
	Replaces  string
	Replacing bool
}

// AlwaysEdits is Pending.Always for the file tools.
const AlwaysEdits = "any edit inside the working directory"

// Arg is one argument of a call: its name, and its value as text (a
// string as it is, anything else as compact JSON). A prompter escapes it.
type Arg struct{ Name, Value string }

// Answer is a person's answer to one approval question.
type Answer int

const (
	No     Answer = iota
	Yes           // this call
	Always        // what Pending.Always says, for the rest of the run
	// Later leaves the call undecided: it is deferred, and the run pauses
	// for `ask resume` (DESIGN §9, Pauses).
	Later
)

// Verdict is the answer for one call: the policy's, or any gate's.
type Verdict struct {
	Allowed bool
	Reason  string // why not, fed back to the model
	// Refusal marks a denial by the --safe profile, which makes the run's
	// status "denied".
	Refusal bool
	// Deferred: the call neither runs nor is denied; the run pauses after
	// the step, and `ask resume` decides it (Reason says why it waits).
	Deferred bool
}

// Policy is the decision rules of one run.
type Policy struct {
	Mode string
	Safe bool
	Yes  bool // --yes: approve every gated call
	// AcceptEdits is --accept-edits: the file tools change files inside
	// the working directory without asking; commands still ask.
	AcceptEdits bool
	Allow       []Pattern
	// Deny is every layer's deny rules together (config file, profile,
	// flags): a deny rule is never replaced by a higher layer's.
	Deny []Pattern
	// Prompter is nil when there is no terminal to ask.
	Prompter Prompter
	// NoSandbox is why commands cannot run in the sandbox here, told in
	// --safe's refusals; "" when they can or no sandbox was asked for.
	NoSandbox string
	// Advisor, when set, is asked about every call before the rules.
	Advisor Advisor
	// Defer is --defer-tool: calls matching it wait for `ask resume`
	// rather than run, whatever allows them (a deny still wins).
	Defer []Pattern
	// DeferUndecided is --on-approval defer: a call that needs approval
	// with no terminal to ask is deferred, not denied.
	DeferUndecided bool
	// Resolving: the calls checked are deferred ones being decided (ask
	// resume), so a defer rule puts them to the Prompter instead of
	// deferring them again.
	Resolving bool

	infos  map[string]tools.Info
	tools  map[string]tools.Tool
	mu     sync.Mutex
	always map[string]bool // tools approved for the rest of the run
	// alwaysEdits: a person answered Always to a file tool's call, which
	// approves the file tools' edits inside the working directory, as
	// --accept-edits does.
	alwaysEdits bool
	// alwaysCmds holds the shell commands (simpleCommand.key) approved
	// for the rest of the run.
	alwaysCmds map[string]bool
}

// ShellTool is the tool whose calls the rules judge as shell command
// lines.
const ShellTool = "shell"

// New returns a policy over the tools of a registry.
func New(mode string, safe, yes bool, allow, deny []Pattern, prompter Prompter, all []tools.Tool) *Policy {
	p := &Policy{Mode: mode, Safe: safe, Yes: yes, Allow: allow, Deny: deny, Prompter: prompter,
		infos: map[string]tools.Info{}, tools: map[string]tools.Tool{}, always: map[string]bool{}, alwaysCmds: map[string]bool{}}
	for _, t := range all {
		info := t.Info()
		p.infos[info.Name] = info
		p.tools[info.Name] = t
	}
	return p
}

// controlWriter is a tool that can tell when a call writes into a version
// control directory: the file tools (write_file, edit_file), which never
// reach outside the working directory.
type controlWriter interface {
	WritesControl(arguments string) (path string, ok bool)
}

// replacer is a file tool that can tell what a write would replace.
type replacer interface {
	Replaces(arguments string) (content string, ok bool)
}

// fileTool reports whether name is one of the file tools, whose calls
// --accept-edits and an "always" for edits approve.
func (p *Policy) fileTool(name string) bool {
	_, ok := p.tools[name].(controlWriter)
	return ok && p.infos[name].Risk == tools.Write
}

// writesControl is the path inside a version control directory that a
// call would write, "" for none. Such a write becomes code that runs
// later (a hook, core.fsmonitor), so it is a person's decision alone.
func (p *Policy) writesControl(c providers.ToolCall) string {
	if cw, ok := p.tools[c.Name].(controlWriter); ok {
		if path, yes := cw.WritesControl(c.Arguments); yes {
			return path
		}
	}
	return ""
}

// readOnly reports whether the run may only read: --safe, ask and plan.
func (p *Policy) readOnly() bool { return p.Safe || p.Mode == ModeAsk || p.Mode == ModePlan }

// confinedUnderSafe reports whether a tool runs commands that --safe lets
// run: in agent mode, inside a sandbox that works here, where nothing they
// do can last.
func (p *Policy) confinedUnderSafe(info tools.Info) bool {
	return p.Safe && p.Mode == ModeAgent && info.Risk == tools.Exec && info.Sandboxed
}

// Asks reports whether a call of the tool goes to a person (or to what
// stands for one: --yes, a rule, a hook) in this run: under --safe a
// command tool that runs in the read-only sandbox is run without asking.
func (p *Policy) Asks(info tools.Info) bool {
	return info.RequiresApproval && !p.confinedUnderSafe(info)
}

// Declared filters the tools offered to the model: a read-only run offers
// only tools that read, and a tool denied by name is not offered at all.
func (p *Policy) Declared(all []tools.Tool) []tools.Tool {
	var out []tools.Tool
	for _, t := range all {
		info := t.Info()
		if p.readOnly() && info.Risk != tools.Read && !p.confinedUnderSafe(info) {
			continue
		}
		if deniedOutright(p.Deny, info.Name) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Check decides the calls of one step. Calls that need approval are put to
// the person together, in one question.
func (p *Policy) Check(ctx context.Context, calls []providers.ToolCall) []Verdict {
	verdicts := make([]Verdict, len(calls))
	var ask []int
	control := false
	advice := p.advise(ctx, calls)
	for i, c := range calls {
		v, needsApproval := p.decide(c, advice[i])
		verdicts[i] = v
		if needsApproval {
			ask = append(ask, i)
		}
		control = control || p.writesControl(c) != ""
	}
	if control {
		// The calls of a step run together, each judged against the tree
		// before any of them: beside a write that version control runs
		// (a HEAD that makes a git directory), another write of the step
		// (its config) is part of it, and a person sees it too.
		ask = ask[:0]
		for i, c := range calls {
			_, writer := p.tools[c.Name].(controlWriter)
			if verdicts[i].Allowed && writer && p.infos[c.Name].Risk == tools.Write {
				verdicts[i] = Verdict{}
			}
			if !verdicts[i].Allowed && verdicts[i].Reason == "" {
				ask = append(ask, i)
			}
		}
	}
	if len(ask) == 0 {
		return verdicts
	}
	if p.Prompter == nil {
		for _, i := range ask {
			if p.DeferUndecided {
				verdicts[i] = Verdict{Deferred: true, Reason: calls[i].Name + " needs approval and there is no terminal to ask (--on-approval defer)"}
				continue
			}
			verdicts[i] = Verdict{Reason: fmt.Sprintf("%s needs approval and there is no terminal to ask; rerun with --yes or --allow-tool %s", calls[i].Name, calls[i].Name)}
			if p.fileTool(calls[i].Name) {
				verdicts[i].Reason = fmt.Sprintf("%s changes files and needs approval, and there is no terminal to ask; rerun with --accept-edits (edits inside the working directory), --yes or --allow-tool %s", calls[i].Name, calls[i].Name)
			}
			if calls[i].Name == ShellTool {
				if ok, _ := p.unjudged(calls[i].Name, readLine(Summary(calls[i].Arguments))); ok {
					verdicts[i].Reason = "shell needs approval and there is no terminal to ask: the line cannot be judged statically and a deny rule names shell, so neither --yes nor an allow rule allows it; write it without expansions"
				}
			}
			if path := p.writesControl(calls[i]); path != "" {
				verdicts[i].Reason = fmt.Sprintf("%s would write %s, which version control runs or reads as code: only a yes on a terminal allows that (--yes, --accept-edits and --allow-tool do not)", calls[i].Name, path)
			}
		}
		return verdicts
	}
	pending := make([]Pending, len(ask))
	for k, i := range ask {
		pending[k] = p.pending(calls[i])
	}
	answers, err := p.Prompter.Approve(ctx, pending)
	// Fail closed: only an explicit yes or always runs a call; an error, a
	// missing answer or any other value is a denial.
	for k, i := range ask {
		switch {
		case err != nil || k >= len(answers):
			verdicts[i] = Verdict{Reason: "not approved: " + errText(err)}
		case answers[k] == Yes:
			verdicts[i] = Verdict{Allowed: true}
		case answers[k] == Always:
			verdicts[i] = Verdict{Allowed: true}
			// Never for writes into version control: decide asks first.
			p.mu.Lock()
			switch {
			case calls[i].Name == ShellTool:
				for _, key := range alwaysKeys(calls[i]) {
					p.alwaysCmds[key] = true
				}
			case p.fileTool(calls[i].Name):
				p.alwaysEdits = true
			default:
				p.always[calls[i].Name] = true
			}
			p.mu.Unlock()
		case answers[k] == No:
			verdicts[i] = Verdict{Reason: "the user declined this call"}
		case answers[k] == Later:
			verdicts[i] = Verdict{Deferred: true, Reason: "left undecided"}
		default:
			verdicts[i] = Verdict{Reason: fmt.Sprintf("not approved: unexpected answer %d", answers[k])}
		}
	}
	return verdicts
}

// pending describes a call for the approval question.
func (p *Policy) pending(c providers.ToolCall) Pending {
	pd := Pending{ID: c.ID, Name: c.Name, Summary: Summary(c.Arguments), Args: otherArgs(c.Arguments), Risk: p.infos[c.Name].Risk}
	switch {
	case c.Name == ShellTool:
		var covers []string
		for _, key := range alwaysKeys(c) {
			covers = append(covers, "any "+key)
		}
		pd.Always = strings.Join(covers, ", ")
	case p.fileTool(c.Name):
		pd.Always = AlwaysEdits
		if p.writesControl(c) != "" {
			pd.Always = "" // a person decides each such write
		}
	default:
		pd.Always = "any " + c.Name + " call"
	}
	if r, ok := p.tools[c.Name].(replacer); ok {
		pd.Replaces, pd.Replacing = r.Replaces(c.Arguments)
	}
	return pd
}

// decide applies the rules that need no person, in order of precedence:
// --safe for writes and commands, deny patterns, read-only modes, allow
// patterns and --yes, then the tool's own approval requirement.
func (p *Policy) decide(c providers.ToolCall, advice Advice) (v Verdict, needsApproval bool) {
	info, known := p.infos[c.Name]
	if !known {
		// The registry answers unknown tools with an error result.
		return Verdict{Allowed: true}, false
	}
	verb := map[tools.Risk]string{tools.Write: "writes files", tools.Exec: "runs commands"}[info.Risk]
	if info.Risk != tools.Read && p.Safe && !p.confinedUnderSafe(info) {
		// Before the deny patterns: under --safe every write or command is
		// a refusal, and so exit 6, even one a pattern denies as well.
		reason := fmt.Sprintf("refused by --safe: %s %s", c.Name, verb)
		if info.Risk == tools.Exec && p.NoSandbox != "" {
			reason += " and the sandbox " + p.NoSandbox
		}
		return Verdict{Reason: reason, Refusal: true}, false
	}
	if advice.Decision == AdviseDeny {
		return Verdict{Reason: advice.Reason}, false
	}
	subject := Summary(c.Arguments)
	var line *shellLine
	if c.Name == ShellTool {
		line = readLine(subject)
	}
	for _, d := range p.Deny {
		if d.denies(c.Name, subject, line) {
			return Verdict{Reason: "--deny-tool " + d.String() + " matches it"}, false
		}
	}
	// A line whose commands cannot all be known ($(printf rm) -f x) may
	// run what a deny rule names: while one names the tool, nothing but a
	// person allows it (not --yes, an allow rule, or the --safe sandbox).
	unjudged, unjudgedDeny := p.unjudged(c.Name, line)
	if unjudged && p.Yes {
		return unjudgedDeny, false
	}
	if info.Risk != tools.Read && (p.Mode == ModeAsk || p.Mode == ModePlan) {
		return Verdict{Reason: fmt.Sprintf("%s %s, which %s mode does not allow", c.Name, verb, p.Mode)}, false
	}
	if advice.Decision == AdviseDefer {
		// The hook asks again on resume: only its own later answer lets
		// the call go on.
		return Verdict{Deferred: true, Reason: cmp.Or(advice.Reason, "deferred by a PreToolUse hook")}, false
	}
	if d, ok := matching(p.Defer, c.Name, subject, line); ok {
		if !p.Resolving {
			return Verdict{Deferred: true, Reason: "--defer-tool " + d.String() + " matches it"}, false
		}
		return Verdict{}, true // the decision ask resume was given
	}
	if p.writesControl(c) != "" {
		return Verdict{}, true // before --yes, allow rules and "always"
	}
	if advice.Decision == AdviseAsk {
		return Verdict{Allowed: p.Yes}, !p.Yes
	}
	if p.confinedUnderSafe(info) && !unjudged {
		// A command confined to the read-only sandbox: nothing to approve.
		return Verdict{Allowed: true}, false
	}
	if !unjudged && (allowed(p.Allow, c.Name, subject, line) || advice.Decision == AdviseAllow) {
		return Verdict{Allowed: true}, false
	}
	// Seam: an allowing PreToolUse hook counts as an allow rule (DESIGN
	// §5 Hooks), so it belongs here, after --safe, the deny rules, the
	// modes and writes into version control, none of which it overrides.
	p.mu.Lock()
	always := p.always[c.Name]
	if line != nil {
		always = line.approved(p.alwaysCmds)
	}
	if p.fileTool(c.Name) {
		// The file tools reach nothing outside the working directory, and
		// writes into version control were asked about above.
		always = p.alwaysEdits || p.AcceptEdits
	}
	p.mu.Unlock()
	if !info.RequiresApproval || p.Yes || always {
		return Verdict{Allowed: true}, false
	}
	return Verdict{}, true
}

// unjudged reports whether a shell line cannot be judged statically
// while a deny rule names its tool, with the denial to give it where no
// person can decide.
func (p *Policy) unjudged(name string, line *shellLine) (bool, Verdict) {
	if line == nil || line.static {
		return false, Verdict{}
	}
	d, ok := namesTool(p.Deny, name)
	if !ok {
		return false, Verdict{}
	}
	return true, Verdict{Reason: fmt.Sprintf("--deny-tool %s may match it: the command line cannot be judged statically, and only a person may allow such a line while a deny rule names %s (--yes and allow rules do not); write it without expansions", d, name)}
}

// summaryKeys are the arguments that can be a call's main one, in order.
var summaryKeys = []string{"command", "path", "pattern", "url", "query"}

// Summary is the part of a call's arguments a person (and an argument
// pattern) looks at: a shell command, a path, a pattern; otherwise the
// arguments' compact JSON.
func Summary(arguments string) string {
	var args map[string]any
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return arguments
	}
	if k := summaryKey(args); k != "" {
		return args[k].(string)
	}
	b, _ := json.Marshal(args)
	return string(b)
}

func summaryKey(args map[string]any) string {
	for _, k := range summaryKeys {
		if _, ok := args[k].(string); ok {
			return k
		}
	}
	return ""
}

// otherArgs are the arguments Summary does not show, sorted by name; nil
// when it shows them all (no main argument: the whole JSON).
func otherArgs(arguments string) []Arg {
	var values map[string]any
	if json.Unmarshal([]byte(arguments), &values) != nil {
		return nil
	}
	main := summaryKey(values)
	if main == "" {
		return nil
	}
	var out []Arg
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if name == main {
			continue
		}
		a := Arg{Name: name}
		if s, ok := values[name].(string); ok {
			a.Value = s
		} else {
			b, _ := json.Marshal(values[name])
			a.Value = string(b)
		}
		out = append(out, a)
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return "no answer"
	}
	return err.Error()
}

// Pattern is an --allow-tool or --deny-tool value (or one of the config
// file's tools.allow and tools.deny): a tool name glob, and optionally a
// glob over the call's main argument after a colon, such as
// "shell:git status*" or "mcp_fs__*". For the shell tool the argument
// glob is matched against each simple command of the line (see
// shellLine), never against the line as written.
type Pattern struct {
	raw, name, arg string
	hasArg         bool
}

// ParsePattern reads a pattern. White space around the pattern and around
// its argument part is not part of it, and a run of white space inside
// the argument part is one space, as in a command's canonical form.
func ParsePattern(s string) (Pattern, error) {
	s = strings.TrimSpace(s)
	name, arg, hasArg := strings.Cut(s, ":")
	if name == "" {
		return Pattern{}, fmt.Errorf("tool pattern %q has no tool name: write NAME or NAME:ARGUMENT-PREFIX*", s)
	}
	return Pattern{raw: s, name: strings.TrimSpace(name), arg: strings.Join(strings.Fields(arg), " "), hasArg: hasArg}, nil
}

// ParsePatterns reads several patterns.
func ParsePatterns(ss []string) ([]Pattern, error) {
	var out []Pattern
	for _, s := range ss {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (p Pattern) String() string { return p.raw }

// Name is the pattern's tool name glob.
func (p Pattern) Name() string { return p.name }

// Unmatched returns the patterns whose tool name matches none of the
// policy's tools: most often a misspelt name, which would make a deny rule
// deny nothing.
func (p *Policy) Unmatched(patterns []Pattern) []Pattern {
	var out []Pattern
	for _, pat := range patterns {
		matched := false
		for name := range p.infos {
			if glob(pat.name, name) {
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, pat)
		}
	}
	return out
}

// ToolNames returns the names of the policy's tools, sorted.
func (p *Policy) ToolNames() []string {
	names := make([]string, 0, len(p.infos))
	for name := range p.infos {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Match reports whether a call of tool name with main argument subject
// matches, the subject taken as a string (white space around it aside).
// The policy judges the shell tool's calls per command instead.
func (p Pattern) Match(name, subject string) bool {
	if !glob(p.name, name) {
		return false
	}
	return !p.hasArg || glob(p.arg, strings.TrimSpace(subject))
}

// denies reports whether a deny pattern matches a call: for the shell
// tool (line not nil), when its argument glob matches any command of the
// line, guesses included.
func (p Pattern) denies(name, subject string, line *shellLine) bool {
	if line == nil || !p.hasArg {
		return p.Match(name, subject)
	}
	if !glob(p.name, name) {
		return false
	}
	for _, c := range line.cmds {
		if glob(p.arg, c.String()) {
			return true
		}
	}
	return false
}

// allowed reports whether allow patterns cover a call. A shell line (line
// not nil) is covered by a pattern without an argument part, or when it
// is static and each of its commands matches some pattern's argument
// glob.
func allowed(allow []Pattern, name, subject string, line *shellLine) bool {
	var args []Pattern
	for _, a := range allow {
		switch {
		case !glob(a.name, name):
		case line == nil && a.Match(name, subject):
			return true
		case !a.hasArg:
			return true
		default:
			args = append(args, a)
		}
	}
	if line == nil || len(args) == 0 || !line.static || len(line.runs()) == 0 {
		return false
	}
	for _, c := range line.runs() {
		if !slices.ContainsFunc(args, func(a Pattern) bool { return glob(a.arg, c.String()) }) {
			return false
		}
	}
	return true
}

// namesTool returns the first deny pattern whose tool name glob matches
// the tool.
func namesTool(deny []Pattern, name string) (Pattern, bool) {
	for _, d := range deny {
		if glob(d.name, name) {
			return d, true
		}
	}
	return Pattern{}, false
}

// deniedOutright reports whether a deny pattern covers every call of the
// tool, so that it need not be declared.
func deniedOutright(deny []Pattern, name string) bool {
	for _, d := range deny {
		if glob(d.name, name) && (!d.hasArg || d.arg == "*") {
			return true
		}
	}
	return false
}

// glob matches s against a pattern where * is any run of characters and ?
// is one; unlike path.Match, * crosses slashes, as commands and paths need.
func glob(pattern, s string) bool {
	px, sx := 0, 0
	nextPx, nextSx := -1, -1
	pr, sr := []rune(pattern), []rune(s)
	for px < len(pr) || sx < len(sr) {
		if px < len(pr) {
			switch c := pr[px]; c {
			case '*':
				nextPx, nextSx = px, sx+1
				px++
				continue
			case '?':
				if sx < len(sr) {
					px++
					sx++
					continue
				}
			default:
				if sx < len(sr) && sr[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if nextSx > 0 && nextSx <= len(sr) {
			px, sx = nextPx, nextSx
			continue
		}
		return false
	}
	return true
}

// matching returns the first defer pattern that matches a call, read as a
// deny rule is (any command of a shell line); a line that cannot be judged
// statically matches every pattern that names its tool, since it may run
// what the pattern names.
func matching(rules []Pattern, name, subject string, line *shellLine) (Pattern, bool) {
	for _, d := range rules {
		if d.denies(name, subject, line) || line != nil && !line.static && glob(d.name, name) {
			return d, true
		}
	}
	return Pattern{}, false
}
