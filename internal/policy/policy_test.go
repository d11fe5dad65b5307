package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/loop"
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

// scripted answers approval questions from a list and counts them.
type scripted struct {
	answer Answer
	asked  int
}

func (s *scripted) Approve(_ context.Context, calls []Pending) ([]Answer, error) {
	s.asked++
	out := make([]Answer, len(calls))
	for i := range out {
		out[i] = s.answer
	}
	return out, nil
}

// TestPolicyTable runs mode × tool risk × flags × terminal and checks what is
// declared, and whether each call is allowed, asked about or denied, and
// whether a denial is a --safe refusal (exit 6).
func TestPolicyTable(t *testing.T) {
	type want struct {
		declared string // tools offered, comma-separated
		// outcome per call of read_file, write_file, shell: "allow", "ask"
		// (allowed after a yes), "deny", "refuse" (--safe)
		outcomes string
	}
	tests := []struct {
		mode      string
		safe, yes bool
		allow     []string
		deny      []string
		terminal  bool
		shellCmd  string
		want      want
	}{
		{mode: "agent", want: want{"read_file,write_file,shell,deploy", "allow,allow,deny"}},
		{mode: "agent", terminal: true, want: want{"read_file,write_file,shell,deploy", "allow,allow,ask"}},
		{mode: "agent", yes: true, want: want{"read_file,write_file,shell,deploy", "allow,allow,allow"}},
		{mode: "agent", allow: []string{"shell:git status*"}, shellCmd: "git status --short", want: want{"read_file,write_file,shell,deploy", "allow,allow,allow"}},
		{mode: "agent", allow: []string{"shell:git status*"}, shellCmd: "git push", want: want{"read_file,write_file,shell,deploy", "allow,allow,deny"}},
		{mode: "agent", yes: true, deny: []string{"shell:rm *"}, shellCmd: "rm -rf /", want: want{"read_file,write_file,shell,deploy", "allow,allow,deny"}},
		{mode: "agent", yes: true, allow: []string{"shell"}, deny: []string{"shell"}, want: want{"read_file,write_file,deploy", "allow,allow,deny"}},
		{mode: "agent", deny: []string{"write_*"}, want: want{"read_file,shell,deploy", "allow,deny,deny"}},
		{mode: "ask", terminal: true, yes: true, want: want{"read_file", "allow,deny,deny"}},
		{mode: "plan", yes: true, want: want{"read_file", "allow,deny,deny"}},
		{mode: "agent", safe: true, yes: true, terminal: true, want: want{"read_file", "allow,refuse,refuse"}},
		{mode: "ask", safe: true, allow: []string{"shell"}, want: want{"read_file", "allow,refuse,refuse"}},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s safe=%v yes=%v allow=%v deny=%v tty=%v %s", tt.mode, tt.safe, tt.yes, tt.allow, tt.deny, tt.terminal, tt.shellCmd)
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
			s := &scripted{answer: Yes}
			if tt.terminal {
				prompter = s
			}
			p := New(tt.mode, tt.safe, tt.yes, allow, deny, prompter, all)

			var declared []string
			for _, d := range p.Declared(all) {
				declared = append(declared, d.Info().Name)
			}
			if got := strings.Join(declared, ","); got != tt.want.declared {
				t.Errorf("declared %s, want %s", got, tt.want.declared)
			}

			cmd := tt.shellCmd
			if cmd == "" {
				cmd = "make test"
			}
			args, _ := json.Marshal(map[string]string{"command": cmd})
			calls := []providers.ToolCall{
				{ID: "1", Name: "read_file", Arguments: `{"path":"a"}`},
				{ID: "2", Name: "write_file", Arguments: `{"path":"a","content":"x"}`},
				{ID: "3", Name: "shell", Arguments: string(args)},
			}
			verdicts := p.Check(context.Background(), calls)
			var got []string
			for _, v := range verdicts {
				switch {
				case v.Refusal:
					got = append(got, "refuse")
				case !v.Allowed:
					got = append(got, "deny")
				case s.asked > 0 && v.Allowed && len(got) == 2:
					got = append(got, "ask")
				default:
					got = append(got, "allow")
				}
				if !v.Allowed && v.Reason == "" {
					t.Errorf("a denial without a reason: %+v", v)
				}
			}
			if strings.Join(got, ",") != tt.want.outcomes {
				t.Errorf("outcomes %s, want %s (verdicts %+v)", strings.Join(got, ","), tt.want.outcomes, verdicts)
			}
		})
	}
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

func TestTerminalPrompter(t *testing.T) {
	tests := []struct {
		input string
		n     int
		want  []Answer
		err   bool
	}{
		{"y\n", 1, []Answer{Yes}, false},
		{"maybe\nn\n", 1, []Answer{No}, false},
		{"a\n", 2, []Answer{Always, Always}, false},
		{"o\ny\nn\n", 2, []Answer{Yes, No}, false},
		{"", 1, []Answer{No}, true},
	}
	for _, tt := range tests {
		var out strings.Builder
		p := &TerminalPrompter{In: strings.NewReader(tt.input), Out: &out}
		calls := make([]Pending, tt.n)
		for i := range calls {
			calls[i] = Pending{Name: "shell", Summary: fmt.Sprintf("cmd %d", i), Risk: tools.Exec}
		}
		got, err := p.Approve(context.Background(), calls)
		if (err != nil) != tt.err || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("input %q: %v, %v; want %v (err %v)", tt.input, got, err, tt.want, tt.err)
		}
		if !strings.Contains(out.String(), "shell (exec) cmd 0") {
			t.Errorf("question does not show the call: %q", out.String())
		}
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

var _ loop.Gate = (*Policy)(nil)
