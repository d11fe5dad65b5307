package run

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/prompts"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/skills"
	"github.com/ask-cli/ask/internal/tools"
)

// skillSet is the skills a run found, and those it activated: by the
// skill tool, or by --skill before the first request.
type skillSet struct {
	all []skills.Skill
	// note tells the person of an allowed-tools entry that is not a tool.
	note func(format string, args ...any)

	mu   sync.Mutex
	used []string
	// narrow are the active skills' allowed-tools: while a skill is
	// active, a call must be within each list.
	narrow []narrowing
	// emit records skill.activated; nil until the run starts, when the
	// skills activated before it (--skill) are recorded.
	emit  func(records.Event)
	step  func() int
	early []skills.Skill
}

// narrowing is a list of tools a run keeps to, and what set it (a
// skill's allowed-tools, an agent definition's tools).
type narrowing struct {
	what     string
	patterns []policy.Pattern
}

// findSkills finds the skills for the run's working directory, unless
// --no-skills. Bad skills are a warning each; a --skill that names none is
// a usage error. A replay finds them for its skill tool; its system prompt
// is the recorded one.
func (r *Run) findSkills() error {
	s := r.Settings
	if s.NoSkills.Value {
		if len(s.Skills.Value) > 0 {
			return fault.Usagef("--skill %s with --no-skills: choose one", s.Skills.Value[0])
		}
		return nil
	}
	found, warnings := FindSkills(s, r.env)
	for _, w := range warnings {
		r.note("warning: %s", w)
	}
	r.skills = &skillSet{all: found, note: r.note}
	for _, name := range s.Skills.Value {
		sk, ok := skills.Lookup(found, name)
		if !ok {
			if len(found) == 0 {
				return fault.Usagef("--skill %s: no skill of that name; none was found (see ask skills list)", name)
			}
			return fault.Usagef("--skill %s: no skill of that name; choose one of %s", name, strings.Join(skills.Names(found), ", "))
		}
		r.skills.activate(sk)
	}
	return nil
}

// skillPrompt is what the system prompt gains from the skills: the list
// the skill tool serves (when it is offered), and the instructions of
// each skill --skill loaded.
func (r *Run) skillPrompt(offered bool) string {
	set := r.skills
	if set == nil {
		return ""
	}
	var b strings.Builder
	if offered {
		text, listed := skills.Listing(set.all)
		if text != "" {
			b.WriteString("\n\n" + text)
		}
		if r.env.Verbose && len(set.all) > 0 {
			r.note("skills: %d found, %d listed in the system prompt (at most %d KB): %s", len(set.all), listed, skills.MaxListing>>10, strings.Join(skills.Names(set.all), ", "))
		}
	}
	for _, name := range r.Settings.Skills.Value {
		sk, _ := skills.Lookup(set.all, name)
		files, _ := skills.Files(sk)
		b.WriteString("\n\nThis skill is loaded for the task:\n" + skills.Render(sk, files))
	}
	return b.String()
}

// skillTool is the skill tool, when the run found skills.
func (r *Run) skillTool() []tools.Tool {
	if r.skills == nil || len(r.skills.all) == 0 {
		return nil
	}
	return []tools.Tool{skills.Tool(r.skills.all, r.skills.activate)}
}

// activate makes a skill active: it is used, its allowed-tools narrow the
// run from now on, and skill.activated says so.
func (set *skillSet) activate(sk skills.Skill) {
	set.mu.Lock()
	defer set.mu.Unlock()
	if slices.Contains(set.used, sk.Name) {
		return
	}
	set.used = append(set.used, sk.Name)
	if len(sk.AllowedTools) > 0 {
		patterns, unread := policy.ToolList(sk.AllowedTools)
		for _, e := range unread {
			set.note("warning: skill %s: allowed-tools %q is not a tool name, so it allows nothing", sk.Name, e)
		}
		set.narrow = append(set.narrow, narrowing{what: "the active skill " + sk.Name + "'s allowed-tools", patterns: patterns})
	}
	if set.emit == nil {
		set.early = append(set.early, sk)
		return
	}
	set.emit(records.Event{Type: records.TypeSkillActivated, Step: set.step(), Name: sk.Name, AllowedTools: sk.AllowedTools})
}

// start records the skills activated before the run started, and every
// later one as it is.
func (set *skillSet) start(emit func(records.Event), step func() int) {
	if set == nil {
		return
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	set.emit, set.step = emit, step
	for _, sk := range set.early {
		emit(records.Event{Type: records.TypeSkillActivated, Name: sk.Name, AllowedTools: sk.AllowedTools})
	}
	set.early = nil
}

// Used are the skills activated, in order.
func (set *skillSet) Used() []string {
	if set == nil {
		return nil
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	return slices.Clone(set.used)
}

func (set *skillSet) narrowings() []narrowing {
	if set == nil {
		return nil
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	return slices.Clone(set.narrow)
}

// names reports whether a tool of that name could make a call within the
// list.
func (n narrowing) names(tool string) bool {
	for _, p := range n.patterns {
		if byName, err := policy.ParsePattern(p.Name()); err == nil && byName.Match(tool, "") {
			return true
		}
	}
	return tool == skills.ToolName
}

// narrowGate denies the calls that a narrowing list leaves out, and puts
// the others to the run's gate: it can only ever take away (an
// intersection with the run's policy), never allow what the gate would
// not. The skill tool stays within every list: loading another skill
// only narrows further.
type narrowGate struct {
	inner loop.Gate
	lists func() []narrowing
}

func (g narrowGate) Check(ctx context.Context, calls []providers.ToolCall) []policy.Verdict {
	lists := g.lists()
	if len(lists) == 0 {
		return g.inner.Check(ctx, calls)
	}
	verdicts := make([]policy.Verdict, len(calls))
	var inside []providers.ToolCall
	var at []int
	for i, c := range calls {
		if out := outside(lists, c); out != nil {
			verdicts[i] = policy.Verdict{Reason: policy.OutsideReason(c.Name, out.what, out.patterns)}
			continue
		}
		inside, at = append(inside, c), append(at, i)
	}
	if len(inside) > 0 {
		for k, v := range g.inner.Check(ctx, inside) {
			verdicts[at[k]] = v
		}
	}
	return verdicts
}

// outside is the first list that leaves the call out, nil when none does.
func outside(lists []narrowing, c providers.ToolCall) *narrowing {
	if c.Name == skills.ToolName {
		return nil
	}
	for i := range lists {
		if !policy.Within(lists[i].patterns, c) {
			return &lists[i]
		}
	}
	return nil
}

// narrowings are the lists the run keeps to now: its agent definition's
// tools, then the active skills' allowed-tools.
func (r *Run) narrowings() []narrowing {
	var out []narrowing
	if c := r.Settings.child; c != nil && c.within != nil {
		out = append(out, *c.within)
	}
	return append(out, r.skills.narrowings()...)
}

// FindSkills finds the skills a run of s would, with a warning for each
// bad one (`ask skills list`); none under --no-skills.
func FindSkills(s Settings, env Env) (found []skills.Skill, warnings []string) {
	if s.NoSkills.Value {
		return nil, nil
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	r := &Run{env: env}
	workdir := AbsPath(env.Wd, s.Workdir.Value)
	return skills.Find(skills.Places(workdir, prompts.RepoRoot(workdir), r.configHome(), r.home()))
}

// addOwnTools adds the skill and agent tools to all, leaving one out,
// with a warning, where a tools file or an MCP server offers a tool of
// its name: the user's tool is kept.
func (r *Run) addOwnTools(all, own []tools.Tool) []tools.Tool {
	for _, t := range own {
		name := t.Info().Name
		if slices.ContainsFunc(all, func(u tools.Tool) bool { return u.Info().Name == name }) {
			r.note("warning: another tool is named %s: ask's own %s tool is left out", name, name)
			continue
		}
		all = append(all, t)
	}
	return all
}
