package term

import (
	"context"

	"github.com/ask-cli/ask/internal/policy"
)

// Approvals opens the terminal at path for a run's questions: the calls
// to approve, in the palette's colours, with the status line held off
// while one is open, and the yes-or-no questions. Where no terminal can be
// opened both are nil: nobody is asked. close closes the terminal.
func Approvals(path string, status *StatusLine, paint Palette) (prompter policy.Prompter, confirm func(context.Context, string) bool, close func()) {
	t, closeIt := OpenTerminal(path)
	if t == nil {
		return nil, nil, closeIt
	}
	t.Out = paint.Approvals(t.Out)
	return HoldWhileAsking(status, t), func(ctx context.Context, question string) bool {
		yes, _ := t.Confirm(ctx, question)
		return yes
	}, closeIt
}

// Input is the free-text questions of the terminal behind an approvals
// prompter, with the status line held off while one is open; nil when the
// prompter has no terminal.
func Input(p policy.Prompter) func(ctx context.Context, question string) (string, error) {
	var line *StatusLine
	if h, ok := p.(statusHoldingPrompter); ok {
		p, line = h.Prompter, h.line
	}
	t, ok := p.(*Prompter)
	if !ok {
		return nil
	}
	return func(ctx context.Context, question string) (string, error) {
		if line != nil {
			line.hold()
			defer line.release()
		}
		return t.Line(ctx, question)
	}
}
