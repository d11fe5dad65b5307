package policy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

// writer is a write tool that says when a call lands in .git.
type writer struct{}

func (writer) Info() tools.Info {
	return tools.Info{Name: "write_file", Risk: tools.Write}
}
func (writer) Run(context.Context, json.RawMessage) (string, error) { return "", nil }
func (writer) WritesControl(args string) (string, bool) {
	return ".git/config", strings.Contains(args, ".git")
}

// recorder answers every question with answer and counts them.
type recorder struct {
	answer Answer
	asked  int
}

func (r *recorder) Approve(_ context.Context, calls []Pending) ([]Answer, error) {
	r.asked += len(calls)
	out := make([]Answer, len(calls))
	for i := range out {
		out[i] = r.answer
	}
	return out, nil
}

// A write into version control is a person's decision: asked even with
// --yes and an allow rule, never covered by "always", and denied where
// nobody can be asked.
func TestWritesIntoVersionControlAreAsked(t *testing.T) {
	t.Parallel()
	allowAll, _ := ParsePatterns([]string{"write_file"})
	hook := providers.ToolCall{ID: "1", Name: "write_file", Arguments: `{"path":".git/hooks/pre-commit"}`}
	plain := providers.ToolCall{ID: "2", Name: "write_file", Arguments: `{"path":"notes.txt"}`}

	person := &recorder{answer: Always}
	p := New(ModeAgent, false, true, allowAll, nil, person, []tools.Tool{writer{}})
	if v := p.Check(context.Background(), []providers.ToolCall{plain}); !v[0].Allowed || person.asked != 0 {
		t.Fatalf("an ordinary write under --yes: %+v, asked %d", v, person.asked)
	}
	for range 2 { // the second time too, after an "always"
		if v := p.Check(context.Background(), []providers.ToolCall{hook}); !v[0].Allowed {
			t.Fatalf("a yes on the terminal did not allow the write: %+v", v)
		}
	}
	if person.asked != 2 {
		t.Errorf("asked %d times about writes into .git, want 2: --yes, the allow rule and always cover none", person.asked)
	}

	nobody := New(ModeAgent, false, true, allowAll, nil, nil, []tools.Tool{writer{}})
	v := nobody.Check(context.Background(), []providers.ToolCall{hook})
	if v[0].Allowed || !strings.Contains(v[0].Reason, "only a yes on a terminal") {
		t.Errorf("without a terminal: %+v", v[0])
	}
}

// shellTool runs commands and needs approval.
type shellTool struct{}

func (shellTool) Info() tools.Info {
	return tools.Info{Name: ShellTool, Risk: tools.Exec, RequiresApproval: true}
}
func (shellTool) Run(context.Context, json.RawMessage) (string, error) { return "", nil }

// fileWriter is writer as the real file tools are: it needs approval.
type fileWriter struct{ writer }

func (fileWriter) Info() tools.Info {
	return tools.Info{Name: "write_file", Risk: tools.Write, RequiresApproval: true}
}

// The file tools need approval like commands. --accept-edits, or an
// "always" answered to one of them, approves their edits inside the
// working directory and nothing else: commands still ask, and a write into
// version control is still a person's decision, each time.
func TestAcceptEdits(t *testing.T) {
	t.Parallel()
	plain := providers.ToolCall{ID: "1", Name: "write_file", Arguments: `{"path":"notes.txt"}`}
	git := providers.ToolCall{ID: "2", Name: "write_file", Arguments: `{"path":".git/config"}`}
	cmd := providers.ToolCall{ID: "3", Name: ShellTool, Arguments: `{"command":"go test"}`}
	all := []tools.Tool{fileWriter{}, shellTool{}}
	tests := []struct {
		name        string
		acceptEdits bool
		person      *recorder // nil: no terminal
		calls       []providers.ToolCall
		want        string // per call: run or deny
		wantAsked   int
	}{
		{"no terminal: an edit is denied", false, nil, []providers.ToolCall{plain}, "deny", 0},
		{"--accept-edits: the edit runs, the command is denied", true, nil, []providers.ToolCall{plain, cmd}, "run,deny", 0},
		{"--accept-edits: never into .git", true, nil, []providers.ToolCall{git}, "deny", 0},
		{"--accept-edits at a terminal: only the command is asked", true, &recorder{answer: No}, []providers.ToolCall{plain, cmd}, "run,deny", 1},
		{"--accept-edits at a terminal: .git is asked", true, &recorder{answer: Yes}, []providers.ToolCall{git}, "run", 1},
		{"at a terminal: an edit is asked", false, &recorder{answer: No}, []providers.ToolCall{plain}, "deny", 1},
	}
	for _, tt := range tests {
		var prompter Prompter
		if tt.person != nil {
			prompter = tt.person
		}
		p := New(ModeAgent, false, false, nil, nil, prompter, all)
		p.AcceptEdits = tt.acceptEdits
		var got []string
		for _, v := range p.Check(context.Background(), tt.calls) {
			got = append(got, map[bool]string{true: "run", false: "deny"}[v.Allowed])
		}
		if strings.Join(got, ",") != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, strings.Join(got, ","), tt.want)
		}
		if tt.person != nil && tt.person.asked != tt.wantAsked {
			t.Errorf("%s: asked %d, want %d", tt.name, tt.person.asked, tt.wantAsked)
		}
	}

	// "Always" to an edit is --accept-edits for the rest of the run: the
	// next edit is not asked, a command and a write into .git are.
	person := &asking{answer: Always}
	p := New(ModeAgent, false, false, nil, nil, person, all)
	p.Check(context.Background(), []providers.ToolCall{plain})
	if len(person.pending) != 1 || person.pending[0].Always != AlwaysEdits {
		t.Fatalf("asked %+v, want one question offering always %q", person.pending, AlwaysEdits)
	}
	person.answer = No
	p.Check(context.Background(), []providers.ToolCall{{ID: "4", Name: "write_file", Arguments: `{"path":"other.txt"}`}})
	p.Check(context.Background(), []providers.ToolCall{git, cmd})
	if len(person.pending) != 3 || person.pending[1].Name != "write_file" || person.pending[1].Always != "" || person.pending[2].Name != ShellTool {
		t.Errorf("after always: asked %+v, want the .git write (without always) and the command", person.pending)
	}
}
