package policy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// TerminalPrompter asks on a terminal: y (this call), n, or a (always, for
// this tool in this run). The calls of one step are asked together; "y" or
// "a" answers all of them, or "o" asks about them one by one.
//
// One goroutine, started by the first question, reads In line by line and
// hands each line to whichever question is open, so that a question can
// give up when its context ends (--timeout, Ctrl-C) without a blocked read
// left behind to swallow the answer to the next one. Close, and closing In,
// end it. Approve is not for concurrent use: the loop asks one step at a
// time.
type TerminalPrompter struct {
	In  io.Reader
	Out io.Writer

	setup   sync.Once
	reading sync.Once
	closing sync.Once
	lines   chan string   // lines read from In; closed when the reader stops
	done    chan struct{} // closed by Close
	readErr error         // why the reader stopped; written before lines is closed
}

// errTerminalClosed is the reader's end after Close.
var errTerminalClosed = errors.New("the terminal was closed")

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
	t := &TerminalPrompter{In: f, Out: f}
	// Closing the file ends a read in progress (a terminal is pollable), so
	// the reader goroutine ends with the run.
	return t, func() { t.Close(); f.Close() }
}

func (t *TerminalPrompter) init() {
	t.setup.Do(func() {
		t.lines = make(chan string)
		t.done = make(chan struct{})
	})
}

// Close stops handing lines over; the caller closes In, which ends a read in
// progress. Questions asked after Close fail at once.
func (t *TerminalPrompter) Close() error {
	t.init()
	t.closing.Do(func() { close(t.done) })
	return nil
}

// read is the one reader of In.
func (t *TerminalPrompter) read() {
	defer close(t.lines)
	br := bufio.NewReader(t.In)
	for {
		s, err := br.ReadString('\n')
		if s != "" { // a last line without a newline is still an answer
			select {
			case t.lines <- s:
			case <-t.done:
				t.readErr = errTerminalClosed
				return
			}
		}
		if err != nil {
			t.readErr = err
			return
		}
	}
}

// Approve implements Prompter. It returns as soon as ctx ends, with the
// context's cause (loop.ErrTimeout, loop.ErrInterrupted) wrapped.
func (t *TerminalPrompter) Approve(ctx context.Context, calls []Pending) ([]Answer, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("not asked: %w", err)
	}
	t.init()
	t.reading.Do(func() { go t.read() })
	if len(calls) == 1 {
		a, err := t.ask(ctx, fmt.Sprintf("ask: allow %s? [y]es [n]o [a]lways: ", describe(calls[0])), false)
		return []Answer{a}, err
	}
	fmt.Fprintf(t.Out, "ask: the model wants to run %d calls:\n", len(calls))
	for i, c := range calls {
		fmt.Fprintf(t.Out, "  %d. %s\n", i+1, describe(c))
	}
	a, err := t.ask(ctx, "ask: allow them all? [y]es [n]o [a]lways [o]ne by one: ", true)
	answers := make([]Answer, len(calls))
	if err != nil || a != oneByOne {
		for i := range answers {
			answers[i] = a
		}
		return answers, err
	}
	for i, c := range calls {
		if answers[i], err = t.ask(ctx, fmt.Sprintf("ask: allow %s? [y]es [n]o [a]lways: ", describe(c)), false); err != nil {
			return answers, err
		}
	}
	return answers, nil
}

// oneByOne is the answer "o" at the question about several calls; it never
// leaves Approve.
const oneByOne Answer = -1

// ask puts one question until it gets an answer it offers: "o" is taken
// only where [o]ne by one is offered. On an error the answer is No.
func (t *TerminalPrompter) ask(ctx context.Context, question string, offerOneByOne bool) (Answer, error) {
	for {
		fmt.Fprint(t.Out, question)
		var line string
		select {
		case <-ctx.Done():
			fmt.Fprintln(t.Out) // end the unanswered question's line
			return No, fmt.Errorf("no answer on the terminal: %w", context.Cause(ctx))
		case <-t.done:
			return No, fmt.Errorf("no answer on the terminal: %w", errTerminalClosed)
		case s, ok := <-t.lines:
			if !ok {
				return No, fmt.Errorf("no answer on the terminal: %w", t.readErr)
			}
			line = s
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return Yes, nil
		case "a", "always":
			return Always, nil
		case "n", "no":
			return No, nil
		case "o":
			if offerOneByOne {
				return oneByOne, nil
			}
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
