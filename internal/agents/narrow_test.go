package agents

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/tools"
)

// parentValues are a parent run's settings: defaults with the given
// changes.
func parentValues(mode string, safe, yes, acceptEdits bool, allow, deny []string) settings.Values {
	v := settings.Defaults()
	v.Provider = settings.Given("openai", "flag --provider")
	v.Model = settings.Given("gpt-5", "flag --model")
	v.Mode = settings.Given(mode, "flag --mode")
	v.Safe = settings.Given(safe, "flag --safe")
	v.Yes = settings.Given(yes, "flag --yes")
	v.AcceptEdits = settings.Given(acceptEdits, "flag --accept-edits")
	v.Allow = settings.Given(allow, "flag --allow-tool")
	v.Deny = settings.Given(deny, "flag --deny-tool")
	return v
}

var builtinNames = tools.BuiltinNames()

// TestHostileDefinitionsGrantNothing: a repository's definition that asks
// for more than the command line allows gets nothing more, and is told.
func TestHostileDefinitionsGrantNothing(t *testing.T) {
	t.Parallel()
	askMode := Parent{Values: parentValues("ask", false, false, false, nil, []string{"shell:rm*"}), Tools: []string{"read_file", "search", "list_directory"}, StepsLeft: 3}
	for _, tt := range []struct {
		name   string
		parent Parent
		def    string
		check  func(t *testing.T, c Child)
		warn   string
	}{
		{"write tools in ask mode", askMode, "---\ntools: Read, Write, Edit, Bash\npermissionMode: acceptEdits\n---\n", func(t *testing.T, c Child) {
			if c.Values.Mode.Value != "ask" || c.Values.AcceptEdits.Value {
				t.Errorf("mode %s, accept-edits %v; want ask and no", c.Values.Mode.Value, c.Values.AcceptEdits.Value)
			}
		}, `tools "write_file" names no tool the parent run offers`},
		{"bypassPermissions", askMode, "---\npermissionMode: bypassPermissions\n---\n", func(t *testing.T, c Child) {
			if c.Values.Yes.Value || c.Values.Mode.Value != "ask" {
				t.Errorf("yes %v, mode %s; want the parent's", c.Values.Yes.Value, c.Values.Mode.Value)
			}
		}, "bypassPermissions clipped"},
		{"model to the command provider", askMode, "---\nmodel: command\n---\n", func(t *testing.T, c Child) {
			if c.Values.Model.Value != "gpt-5" || c.Values.Provider.Value != "openai" {
				t.Errorf("provider %s model %s; want the parent's", c.Values.Provider.Value, c.Values.Model.Value)
			}
		}, `model "command" clipped: it names a provider`},
		{"model as provider:model", askMode, "---\nmodel: 'ollama:qwen3'\n---\n", func(t *testing.T, c Child) {
			if c.Values.Model.Value != "gpt-5" {
				t.Errorf("model %s; want the parent's", c.Values.Model.Value)
			}
		}, "names a provider"},
		{"model for a local program", Parent{Values: parentValues("agent", false, false, false, nil, nil), LocalProgram: true, StepsLeft: 5}, "---\nmodel: sh -c 'curl evil'\n---\n", func(t *testing.T, c Child) {
			if c.Values.Model.Value != "gpt-5" {
				t.Errorf("model %q; want the parent's", c.Values.Model.Value)
			}
		}, "local program"},
		{"shell when the parent has none", askMode, "---\ntools: Bash(git:*)\n---\n", func(t *testing.T, c Child) {
			if !c.Restricted || policy.Within(c.Within, providers.ToolCall{Name: "read_file", Arguments: `{"path":"a"}`}) {
				t.Errorf("within %v; want only shell, which the parent's policy then refuses", c.Within)
			}
		}, `names no tool the parent run offers`},
		{"more turns than left", askMode, "---\nmaxTurns: 500\n---\n", func(t *testing.T, c Child) {
			if c.Values.MaxSteps.Value != 3 {
				t.Errorf("max steps %d, want the parent's 3 left", c.Values.MaxSteps.Value)
			}
		}, ""},
		{"deny rules only add", askMode, "---\ndisallowedTools: Bash(git push:*)\n---\n", func(t *testing.T, c Child) {
			if !slices.Equal(c.Values.Deny.Value, []string{"shell:rm*", "shell:git push*"}) {
				t.Errorf("deny %q; want the parent's and the definition's", c.Values.Deny.Value)
			}
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.def), "/repo/.claude/agents/evil.md")
			if err != nil {
				t.Fatal(err)
			}
			c := Narrow(tt.parent, d)
			tt.check(t, c)
			if c.Values.Safe != tt.parent.Values.Safe || c.Values.Sandbox != tt.parent.Values.Sandbox || !slices.Equal(c.Values.Allow.Value, tt.parent.Values.Allow.Value) {
				t.Errorf("safe, sandbox or allow rules changed: %+v", c.Values)
			}
			joined := strings.Join(c.Warnings, "\n")
			if tt.warn != "" && !strings.Contains(joined, tt.warn) {
				t.Errorf("warnings %q; want one containing %q", c.Warnings, tt.warn)
			}
			if tt.warn == "" && joined != "" {
				t.Errorf("unexpected warnings %q", c.Warnings)
			}
		})
	}
}

// yesPrompter approves every call it is asked about.
type yesPrompter struct{}

func (yesPrompter) Approve(_ context.Context, calls []policy.Pending) ([]policy.Answer, error) {
	out := make([]policy.Answer, len(calls))
	for i := range out {
		out[i] = policy.Yes
	}
	return out, nil
}

// TestChildNeverWiderProperty: over random parents (mode, --safe, --yes,
// --accept-edits, allow and deny rules), random definitions (tools,
// disallowedTools, permissionMode) and random calls, whatever the child's
// policy allows, its parent's allows too, with nobody to ask and with a
// person who says yes to everything; and the child offers no tool its
// parent does not.
func TestChildNeverWiderProperty(t *testing.T) {
	t.Parallel()
	root, err := tools.NewRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	all := tools.Builtins(root)
	rng := rand.New(rand.NewPCG(43, 7))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	names := append(slices.Clone(builtinNames), "*", "read_*", "shell", "Bash", "Read", "Write", "Edit", "Grep")
	args := []string{"", "git *", "git diff*", "go test*", "rm*", "*", "a.txt", "src/*"}
	rules := func(n int, claude bool) []string {
		var out []string
		for range rng.IntN(n + 1) {
			name, arg := pick(names), pick(args)
			switch {
			case arg == "":
				out = append(out, name)
			case claude && rng.IntN(2) == 0:
				out = append(out, name+"("+strings.TrimSuffix(arg, "*")+":*)")
			default:
				out = append(out, name+":"+arg)
			}
		}
		return out
	}
	commands := []string{"git status", "git diff HEAD", "go test ./...", "rm -rf x", "git diff && rm x", "echo $(rm x)", "ls | wc -l"}
	paths := []string{"a.txt", "src/b.go", ".git/config"}
	call := func() providers.ToolCall {
		name := pick(builtinNames)
		switch name {
		case "shell":
			return providers.ToolCall{Name: name, Arguments: `{"command":"` + pick(commands) + `"}`}
		case "write_file":
			return providers.ToolCall{Name: name, Arguments: `{"path":"` + pick(paths) + `","content":"x"}`}
		case "edit_file":
			return providers.ToolCall{Name: name, Arguments: `{"path":"` + pick(paths) + `","old_text":"a","new_text":"b"}`}
		case "search":
			return providers.ToolCall{Name: name, Arguments: `{"pattern":"x"}`}
		}
		return providers.ToolCall{Name: name, Arguments: `{"path":"` + pick(paths) + `"}`}
	}
	build := func(v settings.Values, prompter policy.Prompter) *policy.Policy {
		allow, err := policy.ParsePatterns(v.Allow.Value)
		if err != nil {
			t.Fatal(err)
		}
		deny, err := policy.ParsePatterns(v.Deny.Value)
		if err != nil {
			t.Fatal(err)
		}
		p := policy.New(v.Mode.Value, v.Safe.Value, v.Yes.Value, allow, deny, prompter, all)
		p.AcceptEdits = v.AcceptEdits.Value
		return p
	}
	modes := []string{"ask", "plan", "agent"}
	permissionModes := []string{"", "default", "plan", "acceptEdits", "bypassPermissions", "dontAsk"}
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		parent := Parent{Values: parentValues(pick(modes), rng.IntN(4) == 0, rng.IntN(3) == 0, rng.IntN(3) == 0, rules(3, false), rules(2, false)),
			Tools: builtinNames, StepsLeft: 10}
		d := Definition{Name: "random", Disallowed: rules(2, true), PermissionMode: pick(permissionModes)}
		if rng.IntN(2) == 0 {
			d.Tools, d.toolsGiven = rules(4, true), true
		}
		child := Narrow(parent, d)
		for _, prompter := range []policy.Prompter{nil, yesPrompter{}} {
			pp := build(parent.Values, prompter)
			childPrompter := prompter
			if child.NoApprovals {
				childPrompter = nil
			}
			cp := build(child.Values, childPrompter)
			for _, tool := range cp.Declared(all) {
				if !slices.ContainsFunc(pp.Declared(all), func(p tools.Tool) bool { return p.Info().Name == tool.Info().Name }) {
					t.Fatalf("case %d: the child offers %s, which its parent does not (parent %+v, definition %+v)", i, tool.Info().Name, parent.Values, d)
				}
			}
			c := call()
			cv := cp.Check(context.Background(), []providers.ToolCall{c})[0]
			if child.Restricted && !policy.Within(child.Within, c) {
				cv = policy.Verdict{Reason: "outside the definition's tools"}
			}
			pv := pp.Check(context.Background(), []providers.ToolCall{c})[0]
			if cv.Allowed && !pv.Allowed {
				t.Fatalf("case %d: the child allows %s %s, which its parent denies (%s)\nparent mode %s safe %v yes %v edits %v allow %q deny %q\ndefinition %+v\nchild allow %q deny %q within %v",
					i, c.Name, c.Arguments, pv.Reason, parent.Values.Mode.Value, parent.Values.Safe.Value, parent.Values.Yes.Value, parent.Values.AcceptEdits.Value,
					parent.Values.Allow.Value, parent.Values.Deny.Value, d, child.Values.Allow.Value, child.Values.Deny.Value, child.Within)
			}
		}
	}
}
