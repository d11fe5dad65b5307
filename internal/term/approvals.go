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
