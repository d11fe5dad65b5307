package policy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

// advisor gives every call the same advice.
type advisor Advice

func (a advisor) Advise(_ context.Context, calls []providers.ToolCall) []Advice {
	out := make([]Advice, len(calls))
	for i := range out {
		out[i] = Advice(a)
	}
	return out
}

// TestAdvice: a hook's allow is an allow rule and no more (it never beats
// --safe, a deny rule, a read-only mode or a line no rule can judge while
// a deny rule names shell); its deny wins over every allow; its ask needs
// a person whatever allows the call.
func TestAdvice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		advice   Advice
		mode     string
		safe     bool
		yes      bool
		allow    []string
		deny     []string
		terminal bool
		command  string
		want     string // run, ask, or the start of the denial's reason
	}{
		{name: "no advice, no terminal", want: "shell needs approval"},
		{name: "allow", advice: Advice{Decision: AdviseAllow}, want: "run"},
		{name: "allow under a deny rule", advice: Advice{Decision: AdviseAllow}, deny: []string{"shell:rm *"}, command: "rm -rf x", want: "--deny-tool shell:rm *"},
		{name: "allow of an unjudged line under a deny rule", advice: Advice{Decision: AdviseAllow}, deny: []string{"shell:rm *"}, command: "$(printf rm) -rf x", want: "shell needs approval and there is no terminal to ask: the line cannot be judged"},
		{name: "allow under --safe", advice: Advice{Decision: AdviseAllow}, safe: true, want: "refused by --safe"},
		{name: "allow in ask mode", advice: Advice{Decision: AdviseAllow}, mode: ModeAsk, want: "shell runs commands, which ask mode"},
		{name: "deny beats an allow rule", advice: Advice{Decision: AdviseDeny, Reason: "no rm here"}, allow: []string{"shell"}, want: "no rm here"},
		{name: "deny beats --yes", advice: Advice{Decision: AdviseDeny, Reason: "no rm here"}, yes: true, want: "no rm here"},
		{name: "deny beats a person", advice: Advice{Decision: AdviseDeny, Reason: "no rm here"}, terminal: true, want: "no rm here"},
		{name: "ask beats an allow rule", advice: Advice{Decision: AdviseAsk}, allow: []string{"shell"}, terminal: true, want: "ask"},
		{name: "ask without a terminal", advice: Advice{Decision: AdviseAsk}, allow: []string{"shell"}, want: "shell needs approval"},
		{name: "ask with --yes", advice: Advice{Decision: AdviseAsk}, yes: true, want: "run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			allow, err := ParsePatterns(tt.allow)
			if err != nil {
				t.Fatal(err)
			}
			deny, err := ParsePatterns(tt.deny)
			if err != nil {
				t.Fatal(err)
			}
			mode := tt.mode
			if mode == "" {
				mode = ModeAgent
			}
			person := &scripted{answer: Yes}
			var prompter Prompter
			if tt.terminal {
				prompter = person
			}
			p := New(mode, tt.safe, tt.yes, allow, deny, prompter, []tools.Tool{
				fakeTool{tools.Info{Name: "shell", Risk: tools.Exec, RequiresApproval: true}},
			})
			p.Advisor = advisor(tt.advice)
			command := tt.command
			if command == "" {
				command = "make test"
			}
			b, _ := json.Marshal(map[string]string{"command": command})
			args := string(b)
			v := p.Check(context.Background(), []providers.ToolCall{{ID: "1", Name: "shell", Arguments: args}})[0]
			got := v.Reason
			switch {
			case v.Allowed && person.asked > 0:
				got = "ask"
			case v.Allowed:
				got = "run"
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want %q…", got, tt.want)
			}
		})
	}
}
