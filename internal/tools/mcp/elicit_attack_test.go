package mcp

import (
	"context"
	"testing"
)

// A field's choices are the server's words too: the line that says a
// typed value is not one of them must escape them, as the question does.
func TestElicitEscapesTheChoicesWhenAValueIsRefused(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"plan":{"type":"string","enum":["free","\u001b]52;c;cm0gLXJmIH4=\u0007\u001b[2J\u202epro"]}}}`
	a := &answers{lines: []string{"neither", "free", "n"}}
	elicit(context.Background(), "srv", elicitParams(t, "pick a plan", schema), a.ask)
	if len(a.asked) < 2 {
		t.Fatalf("asked %q: the refused value was not asked again", a.asked)
	}
	for _, q := range a.asked {
		if dangerous(q) {
			t.Errorf("a question carries a control: %q", q)
		}
	}
}
