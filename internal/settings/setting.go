// Package settings declares every setting of a run once: its name (the
// flag's and `ask config`'s), short flag, config file key, environment
// variable, kind, default and help, with the field of Values it fills. The
// flags, the layering with sources, `ask config`, the config file's strict
// reader and the man page's test all read the same rows (Rows).
//
// A row owns its value. Row.Parse is its one check and parse: the flag,
// the variable, the config file and its profiles, a batch task line and a
// transcript all give their values through it (Values.Give), so a value
// is never taken by one layer and refused by another.
//
// A row also carries a widening mark (Row.Widening, Row.WidensOver): what
// a value would let a model do beyond the command line's. A layer below
// the command line (a batch task line, an editor session, a skill, an
// agent definition, an MCP client's arguments) is laid over the command
// line's settings by Narrow, and only by Narrow: it refuses, naming the
// key and the layer, any value that would widen them. Deny rules add up,
// an allow list may only shrink, a mode or a sandbox only get stricter, a
// limit only goes down. The argv pass reads the same mark for a flag
// typed after the prompt's first word (Row.Widens).
package settings

import (
	"fmt"
	"slices"
	"time"

	"github.com/ask-cli/ask/internal/bytesize"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/sandbox"
)

// Setting is one setting's value and where it came from: "flag --NAME",
// "conversation --continue", "env VAR", "config FILE[:PROFILE]" or
// "default". A setting that no layer gave has no Source.
type Setting[T any] struct {
	Value  T
	Source string
}

// Given makes a setting given by source.
func Given[T any](value T, source string) Setting[T] {
	return Setting[T]{Value: value, Source: source}
}

// IsGiven reports whether a layer gave the setting.
func (s Setting[T]) IsGiven() bool { return s.Source != "" }

// Or is s when it was given, else lower.
func (s Setting[T]) Or(lower Setting[T]) Setting[T] {
	if s.IsGiven() {
		return s
	}
	return lower
}

// slot is a setting without its type, as the rows see their fields.
type slot interface {
	given() bool
	source() string
	value() any
	set(v any, source string) error
	// take copies the value and source of from, the same row's slot in
	// another layer, without boxing the value as set must.
	take(from slot)
}

func (s *Setting[T]) given() bool    { return s.IsGiven() }
func (s *Setting[T]) take(from slot) { *s = *from.(*Setting[T]) }
func (s *Setting[T]) source() string { return s.Source }
func (s *Setting[T]) value() any     { return s.Value }

func (s *Setting[T]) set(v any, source string) error {
	t, ok := v.(T)
	if !ok {
		var want T
		return fmt.Errorf("a %T for a setting of %T", v, want)
	}
	s.Value, s.Source = t, source
	return nil
}

// Values holds every setting a row declares. The fields are named as the
// code reads them; the rows name them as users type them.
type Values struct {
	Provider     Setting[string]
	Model        Setting[string]
	BaseURL      Setting[string]
	Command      Setting[string]
	System       Setting[string]
	Attach       Setting[[]string]
	Mode         Setting[string]
	Safe         Setting[bool]
	MaxSteps     Setting[int]
	Timeout      Setting[time.Duration]
	Sandbox      Setting[string]
	AllowNetwork Setting[bool]
	SandboxMCP   Setting[bool]
	// AllowHosts are the names sandboxed commands may reach through ask's
	// proxy (--allow-host).
	AllowHosts          Setting[[]string]
	SandboxHide         Setting[[]string]
	SandboxEnv          Setting[[]string]
	SandboxMaxProcesses Setting[int]
	SandboxScratchSize  Setting[string]
	Allow               Setting[[]string]
	Deny                Setting[[]string]
	// DeferTools are --defer-tool's rules; OnApproval is deny or defer.
	DeferTools Setting[[]string]
	OnApproval Setting[string]
	Yes        Setting[bool]
	// AcceptEdits lets the file tools change files inside the working
	// directory without asking.
	AcceptEdits Setting[bool]
	NoTools     Setting[bool]
	// NoProjectFile leaves the project's AGENTS.md out of the system prompt.
	NoProjectFile Setting[bool]
	ToolsFile     Setting[string]
	MCP           Setting[[]string]
	// NoMCP starts no MCP server, the config file's nor --mcp's.
	NoMCP Setting[bool]
	// MCPHeaders are sent to every --mcp URL; a value may name variables
	// as ${NAME}. They are never recorded: a continued run or a replay is
	// given them again.
	MCPHeaders Setting[[]string]
	Workdir    Setting[string]
	// Worktree names the git worktree the run works in ("auto" for a
	// fresh name, "" for none), made from WorktreeBase ("" for HEAD).
	Worktree     Setting[string]
	WorktreeBase Setting[string]
	NoStream     Setting[bool]
	NoCache      Setting[bool]
	ToolProtocol Setting[string]
	Retries      Setting[int]
	MaxTokens    Setting[int]
	// Temperature not given is the provider's own.
	Temperature Setting[float64]
	// Reasoning is low, medium or high, or "" for the model's own.
	Reasoning Setting[string]
	// Tier is the provider's service tier (flex, background), "" for
	// its standard one.
	Tier Setting[string]
	// Schema is a file, or the schema itself when it starts with "{".
	Schema Setting[string]
	Color  Setting[string]
	// Until is the check a run must pass to complete, "" for none.
	Until     Setting[string]
	MaxRounds Setting[int]
	// The budgets; 0 (not given) for none.
	MaxBudgetTokens Setting[int]
	MaxBudgetUSD    Setting[float64]
	// Compact is auto or off; CompactAt the percentage of ContextWindow
	// (0: the catalog's or the listing's) a request may fill.
	Compact       Setting[string]
	CompactAt     Setting[int]
	ContextWindow Setting[int]
	// NoHooks runs none of the config file's hooks.
	NoHooks Setting[bool]
	// Skills are loaded before the first request (--skill); NoSkills
	// finds none.
	Skills   Setting[[]string]
	NoSkills Setting[bool]
	// MaxAgents is how many subagents run at once; NoAgents offers no
	// agent tool.
	MaxAgents Setting[int]
	NoAgents  Setting[bool]
}

// Defaults is the built-in layer.
func Defaults() Values {
	var v Values
	for _, r := range Rows() {
		if r.IsSetting() && r.Default != nil {
			r.slot(&v).set(r.Default, "default")
		}
	}
	return v
}

// Over lays hi over lo: each setting hi gives wins, except that the lists
// of a row that Adds (the deny rules) join, lower layers first.
func Over(hi, lo Values) Values {
	lo.Cover(&hi)
	return lo
}

// Cover lays hi over v in place: v becomes Over(*hi, *v), without the
// copies of the whole Values that a run's settings resolution would
// otherwise hold on its stack.
func (v *Values) Cover(hi *Values) {
	for _, r := range Rows() {
		if !r.IsSetting() {
			continue
		}
		h, l := r.slot(hi), r.slot(v)
		switch {
		case !h.given() && l.given():
			// the lower layer's stands
		case r.Adds && h.given() && l.given() && len(l.value().([]string)) > 0:
			if len(h.value().([]string)) == 0 {
				break // an empty higher list adds nothing
			}
			joined := slices.Concat(l.value().([]string), h.value().([]string))
			l.set(joined, l.source()+", "+h.source())
		default:
			l.take(h)
		}
	}
}

// Layer is one layer's settings by row name, as a config file or a
// transcript gives them: Set fills Values from it.
type Layer map[string]any

// Set gives the row named name the value v from source. v must be of the
// row's kind (Kind.Zero's type).
func (v *Values) Set(name string, value any, source string) error {
	r, ok := Lookup(name)
	if !ok || !r.IsSetting() {
		return fmt.Errorf("no setting %q", name)
	}
	if err := r.slot(v).set(value, source); err != nil {
		return fmt.Errorf("setting %s: %w", name, err)
	}
	return nil
}

// Get is the value and source of the row named name in v; ok is false
// when no layer gave it.
func (v *Values) Get(name string) (value any, source string, ok bool) {
	r, found := Lookup(name)
	if !found || !r.IsSetting() {
		return nil, "", false
	}
	s := r.slot(v)
	return s.value(), s.source(), s.given()
}

// The parsed forms of the settings the run reads as more than text. Each
// value was checked by its row's Parse where a layer gave it, so these
// cannot fail; a value no layer gave is the row's default.

// SandboxLevel is --sandbox's level.
func (v *Values) SandboxLevel() sandbox.Level {
	if l, err := sandbox.ParseLevel(v.Sandbox.Value); err == nil {
		return l
	}
	return sandbox.Off
}

// ToolRules are --allow-tool's and --deny-tool's patterns.
func (v *Values) ToolRules() (allow, deny []policy.Pattern) {
	allow, _ = policy.ParsePatterns(v.Allow.Value)
	deny, _ = policy.ParsePatterns(v.Deny.Value)
	return allow, deny
}

// ScratchBytes is --sandbox-scratch-size in bytes, 0 for the sandbox's
// default.
func (v *Values) ScratchBytes() int64 {
	n, err := bytesize.Parse(v.SandboxScratchSize.Value)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
