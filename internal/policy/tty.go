package policy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// TerminalPrompter asks on a terminal: y (this call), n, or a (always, for
// this tool in this run). The calls of one step are asked together; "y" or
// "a" answers all of them, or the person can answer call by call.
type TerminalPrompter struct {
	In  io.Reader
	Out io.Writer
}

// OpenTerminal opens the controlling terminal for approvals. It returns nil
// when there is none (CI, cron, a pipe from another program), so that gated
// calls are denied instead of waiting for an answer that cannot come.
func OpenTerminal(path string) (*TerminalPrompter, func()) {
	if path == "" {
		return nil, func() {}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, func() {}
	}
	return &TerminalPrompter{In: f, Out: f}, func() { f.Close() }
}

// Approve implements Prompter.
func (t *TerminalPrompter) Approve(ctx context.Context, calls []Pending) ([]Answer, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	br := bufio.NewReader(t.In)
	if len(calls) == 1 {
		a, err := t.ask(br, fmt.Sprintf("ask: allow %s? [y]es [n]o [a]lways: ", describe(calls[0])))
		return []Answer{a}, err
	}
	fmt.Fprintf(t.Out, "ask: the model wants to run %d calls:\n", len(calls))
	for i, c := range calls {
		fmt.Fprintf(t.Out, "  %d. %s\n", i+1, describe(c))
	}
	a, err := t.ask(br, "ask: allow them all? [y]es [n]o [a]lways [o]ne by one: ")
	if err != nil || a != oneByOne {
		answers := make([]Answer, len(calls))
		for i := range answers {
			answers[i] = a
		}
		return answers, err
	}
	answers := make([]Answer, len(calls))
	for i, c := range calls {
		if answers[i], err = t.ask(br, fmt.Sprintf("ask: allow %s? [y]es [n]o [a]lways: ", describe(c))); err != nil {
			return answers, err
		}
	}
	return answers, nil
}

const oneByOne Answer = -1

func (t *TerminalPrompter) ask(br *bufio.Reader, question string) (Answer, error) {
	for {
		fmt.Fprint(t.Out, question)
		line, err := br.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return Yes, nil
		case "a", "always":
			return Always, nil
		case "o":
			return oneByOne, nil
		case "n", "no":
			return No, nil
		}
		if err != nil {
			return No, fmt.Errorf("no answer on the terminal: %w", err)
		}
	}
}

func describe(c Pending) string {
	s := c.Summary
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return fmt.Sprintf("%s (%s) %s", c.Name, c.Risk, s)
}
