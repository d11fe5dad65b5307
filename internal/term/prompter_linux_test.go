//go:build linux

package term

import (
	"context"
	"errors"
	"testing"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/term/termtest"
)

// On a real terminal: the question is shown there, the answer typed there
// is taken, an open question gives up on Ctrl-C, and closing the terminal
// ends the reader goroutine blocked in a read.
func TestOpenTerminalOnAPseudoTerminal(t *testing.T) {
	m, path := termtest.OpenPTY(t)
	tp, closeTTY := OpenTerminal(path)
	if tp == nil {
		t.Fatalf("OpenTerminal(%s) found no terminal", path)
	}
	defer closeTTY()

	type result struct {
		answers []policy.Answer
		err     error
	}
	ask := func(ctx context.Context) chan result {
		ch := make(chan result, 1)
		go func() {
			a, err := tp.Approve(ctx, pending(1))
			ch <- result{a, err}
		}()
		return ch
	}

	done := ask(context.Background())
	termtest.ReadUntil(t, m, "allow shell (exec) cmd 0? [y]es [n]o [a]lways cmd: ")
	if _, err := m.WriteString("a\n"); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || len(r.answers) != 1 || r.answers[0] != policy.Always {
		t.Fatalf("typed a: %v, %v", r.answers, r.err)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	done = ask(ctx)
	termtest.ReadUntil(t, m, "[a]lways cmd: ")
	cancel(loop.ErrInterrupted)
	if r := <-done; !errors.Is(r.err, loop.ErrInterrupted) {
		t.Fatalf("Ctrl-C during the question: %v, %v", r.answers, r.err)
	}

	closeTTY()
	for range tp.lines { // ends only when the reader goroutine returns
	}
}
