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
