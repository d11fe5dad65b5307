package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

type fakeTool struct{ info tools.Info }

func (f fakeTool) Info() tools.Info { return f.info }
func (f fakeTool) Run(context.Context, json.RawMessage) (string, error) {
	return "", nil
}

var all = []tools.Tool{
	fakeTool{tools.Info{Name: "read_file", Risk: tools.Read}},
	fakeTool{tools.Info{Name: "write_file", Risk: tools.Write}},
	fakeTool{tools.Info{Name: "shell", Risk: tools.Exec, RequiresApproval: true}},
	fakeTool{tools.Info{Name: "deploy", Risk: tools.Exec, RequiresApproval: true}},
}

// notAnAnswer is no answer a prompter may give (it was the terminal
// prompter's internal "one by one", which stays inside its Approve).
const notAnAnswer Answer = -1

// scripted answers approval questions with one answer for every call and
// records what it was asked.
type scripted struct {
	answer Answer
	asked  int      // questions
	names  []string // calls put to the person, over all questions
}

func (s *scripted) Approve(_ context.Context, calls []Pending) ([]Answer, error) {
	s.asked++
	out := make([]Answer, len(calls))
	for i, c := range calls {
		out[i] = s.answer
		s.names = append(s.names, c.Name)
	}
	return out, nil
}

// matrix is every kind of tool: each risk, with and without an approval
// gate.
var matrix = []tools.Tool{
	fakeTool{tools.Info{Name: "read_file", Risk: tools.Read}},
	fakeTool{tools.Info{Name: "read_secret", Risk: tools.Read, RequiresApproval: true}},
	fakeTool{tools.Info{Name: "write_file", Risk: tools.Write}},
	fakeTool{tools.Info{Name: "edit_file", Risk: tools.Write, RequiresApproval: true}},
	fakeTool{tools.Info{Name: "make", Risk: tools.Exec}},
	fakeTool{tools.Info{Name: "shell", Risk: tools.Exec, RequiresApproval: true}},
}

// TestPolicyTable runs mode × tool risk and approval gate × flags ×
// terminal (and the person's answer) and checks what is declared to the
// model and, for one step that calls every tool, what happens to each call:
//
//	run     allowed without a question
//	ask:y   asked, and allowed
//	ask:n   asked, and denied
//	deny    denied without a question (the exit code does not change)
//	refuse  refused by --safe (the CLI exits 6; see cmd/ask TestPolicyExitCodes)
//
// again, when set, is the same step checked a second time (after "always").
func TestPolicyTable(t *testing.T) {
	const every = "read_file,read_secret,write_file,edit_file,make,shell"
	const readOnly = "read_file,read_secret"
	tests := []struct {
		mode      string
		safe, yes bool
		allow     []string
		deny      []string
		terminal  bool
		answer    Answer // the person's answer, with a terminal
		shellCmd  string // default "make test"
		declared  string
		outcomes  string // per tool of matrix, in its order
		again     string
	}{
		// agent: everything declared; gated calls need a person or a flag.
		{mode: "agent", declared: every,
			outcomes: "run,deny,run,deny,run,deny"},
		{mode: "agent", terminal: true, answer: Yes, declared: every,
			outcomes: "run,ask:y,run,ask:y,run,ask:y", again: "run,ask:y,run,ask:y,run,ask:y"},
		{mode: "agent", terminal: true, answer: No, declared: every,
			outcomes: "run,ask:n,run,ask:n,run,ask:n"},
		{mode: "agent", terminal: true, answer: Always, declared: every,
			outcomes: "run,ask:y,run,ask:y,run,ask:y", again: "run,run,run,run,run,run"},
		{mode: "agent", terminal: true, answer: notAnAnswer, declared: every,
			outcomes: "run,ask:n,run,ask:n,run,ask:n"}, // fail closed on an answer that is not yes or always
		{mode: "agent", yes: true, declared: every,
			outcomes: "run,run,run,run,run,run"},
		{mode: "agent", yes: true, terminal: true, answer: No, declared: every,
			outcomes: "run,run,run,run,run,run"},
		{mode: "agent", allow: []string{"shell:git status*"}, shellCmd: "git status --short", declared: every,
			outcomes: "run,deny,run,deny,run,run"},
		{mode: "agent", allow: []string{"shell:git status*"}, shellCmd: "git push", declared: every,
			outcomes: "run,deny,run,deny,run,deny"},
		{mode: "agent", allow: []string{"shell:git status*"}, shellCmd: "git push", terminal: true, answer: Yes, declared: every,
			outcomes: "run,ask:y,run,ask:y,run,ask:y"},
		{mode: "agent", allow: []string{"edit_file", "read_*"}, declared: every,
			outcomes: "run,run,run,run,run,deny"},
		{mode: "agent", yes: true, deny: []string{"shell:rm *"}, shellCmd: "rm -rf /", declared: every,
			outcomes: "run,run,run,run,run,deny"},
		{mode: "agent", yes: true, allow: []string{"shell"}, deny: []string{"shell"}, declared: "read_file,read_secret,write_file,edit_file,make",
			outcomes: "run,run,run,run,run,deny"},
		{mode: "agent", deny: []string{"*_file"}, terminal: true, answer: Yes, declared: "read_secret,make,shell",
			outcomes: "deny,ask:y,deny,deny,run,ask:y"},
		// ask and plan: only reading tools, whatever the flags say.
		{mode: "ask", declared: readOnly,
			outcomes: "run,deny,deny,deny,deny,deny"},
		{mode: "ask", terminal: true, answer: Yes, declared: readOnly,
			outcomes: "run,ask:y,deny,deny,deny,deny"},
		{mode: "ask", yes: true, allow: []string{"shell"}, terminal: true, declared: readOnly,
			outcomes: "run,run,deny,deny,deny,deny"},
		{mode: "plan", terminal: true, answer: No, declared: readOnly,
			outcomes: "run,ask:n,deny,deny,deny,deny"},
		{mode: "plan", yes: true, declared: readOnly,
			outcomes: "run,run,deny,deny,deny,deny"},
		// --safe: writes and commands are refusals, in every mode, before
		// any allow pattern, --yes or question.
		{mode: "agent", safe: true, declared: readOnly,
			outcomes: "run,deny,refuse,refuse,refuse,refuse"},
		{mode: "agent", safe: true, yes: true, allow: []string{"shell", "make"}, terminal: true, answer: Yes, declared: readOnly,
			outcomes: "run,run,refuse,refuse,refuse,refuse"},
		{mode: "ask", safe: true, terminal: true, answer: Always, declared: readOnly,
			outcomes: "run,ask:y,refuse,refuse,refuse,refuse"},
		{mode: "plan", safe: true, allow: []string{"shell"}, declared: readOnly,
			outcomes: "run,deny,refuse,refuse,refuse,refuse"},
		{mode: "agent", safe: true, deny: []string{"read_file", "shell"}, declared: "read_secret",
			outcomes: "deny,deny,refuse,refuse,refuse,refuse"}, // a write or command is a refusal even when a pattern denies it too
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s safe=%v yes=%v allow=%v deny=%v tty=%v answer=%d %s", tt.mode, tt.safe, tt.yes, tt.allow, tt.deny, tt.terminal, tt.answer, tt.shellCmd)
		t.Run(name, func(t *testing.T) {
			allow, err := ParsePatterns(tt.allow)
			if err != nil {
				t.Fatal(err)
			}
			deny, err := ParsePatterns(tt.deny)
			if err != nil {
				t.Fatal(err)
			}
			var prompter Prompter
			s := &scripted{answer: tt.answer}
			if tt.terminal {
				prompter = s
			}
			p := New(tt.mode, tt.safe, tt.yes, allow, deny, prompter, matrix)

			var declared []string
			for _, d := range p.Declared(matrix) {
				declared = append(declared, d.Info().Name)
			}
			if got := strings.Join(declared, ","); got != tt.declared {
				t.Errorf("declared %s, want %s", got, tt.declared)
			}

			cmd := tt.shellCmd
			if cmd == "" {
				cmd = "make test"
			}
			args, _ := json.Marshal(map[string]string{"command": cmd})
			var calls []providers.ToolCall
			for i, tool := range matrix {
				a := `{"path":"a"}`
				if tool.Info().Name == "shell" {
					a = string(args)
				}
				calls = append(calls, providers.ToolCall{ID: fmt.Sprint(i), Name: tool.Info().Name, Arguments: a})
			}
			check := func(want string) {
				t.Helper()
				s.asked, s.names = 0, nil
				verdicts := p.Check(context.Background(), calls)
				if got := outcomes(t, calls, verdicts, s.names); got != want {
					t.Errorf("outcomes %s, want %s (verdicts %+v)", got, want, verdicts)
				}
				if s.asked > 1 {
					t.Errorf("%d questions for one step, want the gated calls put together in one", s.asked)
				}
			}
			check(tt.outcomes)
			if tt.again != "" {
				check(tt.again)
			}
		})
	}
}

// outcomes names what happened to each call; see TestPolicyTable.
func outcomes(t *testing.T, calls []providers.ToolCall, verdicts []Verdict, asked []string) string {
	t.Helper()
	if len(verdicts) != len(calls) {
		t.Fatalf("%d verdicts for %d calls", len(verdicts), len(calls))
	}
	var got []string
	for i, v := range verdicts {
		wasAsked := slices.Contains(asked, calls[i].Name)
		if !v.Allowed && v.Reason == "" {
			t.Errorf("%s: a denial without a reason", calls[i].Name)
		}
		if v.Allowed && v.Refusal {
			t.Errorf("%s: allowed and refused", calls[i].Name)
		}
		switch {
		case v.Refusal && wasAsked:
			got = append(got, "ask:refuse") // never expected: --safe refuses without asking
		case v.Refusal:
			got = append(got, "refuse")
		case wasAsked && v.Allowed:
			got = append(got, "ask:y")
		case wasAsked:
			got = append(got, "ask:n")
		case v.Allowed:
			got = append(got, "run")
		default:
			got = append(got, "deny")
		}
	}
	return strings.Join(got, ",")
}

func TestAlwaysAndDeclineAndNoTerminal(t *testing.T) {
	s := &scripted{answer: Always}
	p := New(ModeAgent, false, false, nil, nil, s, all)
	call := []providers.ToolCall{{ID: "1", Name: "shell", Arguments: `{"command":"ls"}`}}
	for range 3 {
		if v := p.Check(context.Background(), call); !v[0].Allowed {
			t.Fatalf("denied after always: %+v", v)
		}
	}
	if s.asked != 1 {
		t.Errorf("asked %d times, want once for \"always\"", s.asked)
	}

	p = New(ModeAgent, false, false, nil, nil, &scripted{answer: No}, all)
	if v := p.Check(context.Background(), call); v[0].Allowed || !strings.Contains(v[0].Reason, "declined") {
		t.Errorf("declined call: %+v", v)
	}

	p = New(ModeAgent, false, false, nil, nil, nil, all)
	v := p.Check(context.Background(), call)
	if v[0].Allowed || !strings.Contains(v[0].Reason, "--yes") || v[0].Refusal {
		t.Errorf("without a terminal: %+v, want a denial that names --yes and is not a --safe refusal", v)
	}
}

func TestStepApprovedTogether(t *testing.T) {
	s := &scripted{answer: Yes}
	p := New(ModeAgent, false, false, nil, nil, s, all)
	calls := []providers.ToolCall{
		{ID: "1", Name: "shell", Arguments: `{"command":"ls"}`},
		{ID: "2", Name: "deploy", Arguments: `{}`},
	}
	v := p.Check(context.Background(), calls)
	if !v[0].Allowed || !v[1].Allowed || s.asked != 1 {
		t.Errorf("verdicts %+v after %d questions, want both allowed after one", v, s.asked)
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"shell", "shell", true},
		{"shell", "shells", false},
		{"git status*", "git status --short", true},
		{"git status*", "git push", false},
		{"*", "", true},
		{"mcp_*__read*", "mcp_fs__read_file", true},
		{"./scripts/*.sh", "./scripts/a/b.sh", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*x*y", "axbxcy", true},
	}
	for _, tt := range tests {
		if got := glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestParsePattern(t *testing.T) {
	if _, err := ParsePattern(":ls"); err == nil {
		t.Error("a pattern without a tool name was accepted")
	}
	p, err := ParsePattern("shell:git log:*")
	if err != nil || !p.Match("shell", "git log:--oneline") {
		t.Errorf("pattern with a colon in its argument part: %v %v", p, err)
	}
}

// TestUnmatched checks which rules name no tool of the policy: a name or
// glob that matches one is matched, whatever its argument part says.
func TestUnmatched(t *testing.T) {
	t.Parallel()
	p := New(ModeAgent, false, false, nil, nil, nil, all)
	tests := []struct {
		pattern   string
		unmatched bool
	}{
		{"shell", false},
		{"shell:rm *", false},
		{"*_file", false},
		{"dep?oy", false},
		{"deploy?", true},
		{"shel", true},
		{"shell*", false},
		{"mcp_fs__*", true},
		{"*", false},
		{"Shell", true},
	}
	for _, tt := range tests {
		pat, err := ParsePattern(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(p.Unmatched([]Pattern{pat})) == 1; got != tt.unmatched {
			t.Errorf("Unmatched(%q) = %v, want %v", tt.pattern, got, tt.unmatched)
		}
	}
	if got, want := p.ToolNames(), []string{"deploy", "read_file", "shell", "write_file"}; !slices.Equal(got, want) {
		t.Errorf("ToolNames() = %q, want %q", got, want)
	}
}

func TestDefaultMaxSteps(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode string
		want int
	}{{ModeAgent, 100}, {"", 100}, {ModePlan, 20}, {ModeAsk, 3}} {
		if got := DefaultMaxSteps(tt.mode); got != tt.want {
			t.Errorf("DefaultMaxSteps(%q) = %d, want %d", tt.mode, got, tt.want)
		}
	}
}
