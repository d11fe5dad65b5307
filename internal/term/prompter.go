package term

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/termtext"
)

// Prompter is the policy's approval prompter on a terminal: y (this
// call), n, or a (always, for the rest of the run, what the question names:
// for a shell line its programs and subcommands, "any go test"; for the
// file tools, any edit inside the working directory; not offered for a
// line that cannot be judged, nor for a write into version control). Each
// call is shown whole, escaped, an edit or an overwrite as the change it
// makes, and a question starts on a line of its own. The calls of one step
// are asked together; "y" or "a" answers all of them, or "o" asks about
// them one by one. It is terminal I/O, so it lives here and the policy
// knows it only as a policy.Prompter.
//
// One goroutine, started by the first question, reads In line by line and
// hands each line to whichever question is open, so that a question can
// give up when its context ends (--timeout, Ctrl-C) without a blocked read
// left behind to swallow the answer to the next one. Close, and closing In,
// end it. Approve is not for concurrent use: the loop asks one step at a
// time.
type Prompter struct {
	In  io.Reader
	Out io.Writer

	setup   sync.Once
	reading sync.Once
	closing sync.Once
	lines   chan string   // lines read from In; closed when the reader stops
	done    chan struct{} // closed by Close
	readErr error         // why the reader stopped; written before lines is closed
	// line is the status line of the run on the same terminal, which
	// knows where streamed answer text left the cursor; nil for none.
	line *StatusLine
}

// errTerminalClosed is the reader's end after Close.
var errTerminalClosed = errors.New("the terminal was closed")

// OpenTerminal opens the controlling terminal for approvals. It returns nil
// when there is none (CI, cron, a pipe from another program), so that gated
// calls are denied instead of waiting for an answer that cannot come.
func OpenTerminal(path string) (*Prompter, func()) {
	if path == "" {
		return nil, func() {}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, func() {}
	}
	t := &Prompter{In: f, Out: f}
	// Closing the file ends a read in progress (a terminal is pollable), so
	// the reader goroutine ends with the run.
	return t, func() { t.Close(); f.Close() }
}

func (t *Prompter) init() {
	t.setup.Do(func() {
		t.lines = make(chan string)
		t.done = make(chan struct{})
	})
}

// Close stops handing lines over; the caller closes In, which ends a read in
// progress. Questions asked after Close fail at once.
func (t *Prompter) Close() error {
	t.init()
	t.closing.Do(func() { close(t.done) })
	return nil
}

// read is the one reader of In.
func (t *Prompter) read() {
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

// Approve implements policy.Prompter. It returns as soon as ctx ends, with the
// context's cause (loop.ErrTimeout, loop.ErrInterrupted) wrapped.
func (t *Prompter) Approve(ctx context.Context, calls []policy.Pending) ([]policy.Answer, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("not asked: %w", err)
	}
	t.init()
	t.reading.Do(func() { go t.read() })
	t.startLine()
	defer t.line.answered()
	if len(calls) == 1 {
		fmt.Fprint(t.Out, arguments(calls[0], "  "))
		a, err := t.ask(ctx, question(calls[0]), offers{always: calls[0].Always != ""})
		return []policy.Answer{a}, err
	}
	fmt.Fprintf(t.Out, "ask: the model wants to run %d calls:\n", len(calls))
	anyAlways := false
	for i, c := range calls {
		line := fmt.Sprintf("  %d. %s", i+1, describe(c))
		if c.Always != "" {
			line += " (always: " + termtext.Safe(c.Always) + ")"
			anyAlways = true
		}
		fmt.Fprintln(t.Out, line)
		fmt.Fprint(t.Out, arguments(c, "     "))
	}
	all := "ask: allow them all? [y]es [n]o [a]lways [o]ne by one: "
	if !anyAlways {
		all = "ask: allow them all? [y]es [n]o [o]ne by one: "
	}
	a, err := t.ask(ctx, all, offers{always: anyAlways, oneByOne: true})
	answers := make([]policy.Answer, len(calls))
	if err != nil || a != oneByOne {
		for i := range answers {
			answers[i] = a
		}
		return answers, err
	}
	for i, c := range calls {
		fmt.Fprint(t.Out, arguments(c, "  "))
		if answers[i], err = t.ask(ctx, question(c), offers{always: c.Always != ""}); err != nil {
			return answers, err
		}
	}
	return answers, nil
}

// startLine makes the question start on a line of its own: below model
// text streamed without its newline (models end the sentence before a
// call without one), never glued to it.
func (t *Prompter) startLine() {
	if t.line.takeMidLine() {
		fmt.Fprint(t.Out, "\n")
	}
}

// question asks about one call, offering "always" for what it would
// approve.
func question(c policy.Pending) string {
	if c.Always == "" {
		return fmt.Sprintf("ask: allow %s? [y]es [n]o: ", describe(c))
	}
	return fmt.Sprintf("ask: allow %s? [y]es [n]o [a]lways %s: ", describe(c), termtext.Safe(c.Always))
}

// offers are the answers a question takes besides y and n.
type offers struct{ always, oneByOne bool }

// Confirm puts a yes-or-no question; anything but a yes, an error
// included, is a no.
func (t *Prompter) Confirm(ctx context.Context, question string) (bool, error) {
	if err := context.Cause(ctx); err != nil {
		return false, err
	}
	t.init()
	t.reading.Do(func() { go t.read() })
	t.startLine()
	defer t.line.answered()
	a, err := t.ask(ctx, question, offers{})
	return a == policy.Yes, err
}

// oneByOne is the answer "o" at the question about several calls; it never
// leaves Approve.
const oneByOne policy.Answer = -1

// ask puts one question until it gets an answer it offers: "a" and "o"
// are taken only where offered. On an error the answer is No.
func (t *Prompter) ask(ctx context.Context, question string, offer offers) (policy.Answer, error) {
	for {
		fmt.Fprint(t.Out, question)
		var line string
		select {
		case <-ctx.Done():
			fmt.Fprintln(t.Out) // end the unanswered question's line
			return policy.No, fmt.Errorf("no answer on the terminal: %w", context.Cause(ctx))
		case <-t.done:
			return policy.No, fmt.Errorf("no answer on the terminal: %w", errTerminalClosed)
		case s, ok := <-t.lines:
			if !ok {
				return policy.No, fmt.Errorf("no answer on the terminal: %w", t.readErr)
			}
			line = s
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return policy.Yes, nil
		case "a", "always":
			if offer.always {
				return policy.Always, nil
			}
		case "n", "no":
			return policy.No, nil
		case "o":
			if offer.oneByOne {
				return oneByOne, nil
			}
		}
	}
}

// arguments shows a call's other arguments, one to a line, each line
// under indent: a one-line value after its name, a longer one below it,
// line by line, so that a write's content reads as the file will.
// Everything is escaped and nothing is cut: what is approved is seen.
func arguments(c policy.Pending, indent string) string {
	var b strings.Builder
	for _, a := range c.Args {
		if a.Name == "content" && c.Replacing {
			// A write over a file is shown as the change it makes to it.
			writeChange(&b, indent, c.Replaces, a.Value)
			continue
		}
		name := termtext.Safe(a.Name)
		lines := valueLines(a.Value)
		if len(lines) == 1 && !strings.HasSuffix(a.Value, "\n") {
			fmt.Fprintf(&b, "%s%s: %s\n", indent, name, termtext.Safe(a.Value))
			continue
		}
		fmt.Fprintf(&b, "%s%s (%s):\n", indent, name, termtext.Plural(len(lines), "line", "lines"))
		for _, l := range lines {
			fmt.Fprintf(&b, "%s  | %s\n", indent, termtext.Safe(l))
		}
	}
	if oldText, ok := arg(c, "old_text"); ok {
		if newText, ok := arg(c, "new_text"); ok {
			// An edit is also shown as the change it makes.
			fmt.Fprintf(&b, "%schange:\n", indent)
			for _, l := range valueLines(oldText) {
				fmt.Fprintf(&b, "%s  - %s\n", indent, termtext.Safe(l))
			}
			for _, l := range valueLines(newText) {
				fmt.Fprintf(&b, "%s  + %s\n", indent, termtext.Safe(l))
			}
		}
	}
	return b.String()
}

// valueLines splits a value into its lines; a last newline ends the last
// line, as in a file.
func valueLines(v string) []string {
	lines := strings.Split(v, "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// arg is the value of a call's argument by name.
func arg(c policy.Pending, name string) (string, bool) {
	for _, a := range c.Args {
		if a.Name == name {
			return a.Value, true
		}
	}
	return "", false
}

func describe(c policy.Pending) string {
	return fmt.Sprintf("%s (%s) %s", termtext.Safe(c.Name), c.Risk, termtext.Safe(c.Summary))
}

// Line puts a free-text question (an MCP server's request for input) and
// returns the line typed, without its end; it gives up when ctx ends.
func (t *Prompter) Line(ctx context.Context, question string) (string, error) {
	if err := context.Cause(ctx); err != nil {
		return "", err
	}
	t.init()
	t.reading.Do(func() { go t.read() })
	t.startLine()
	defer t.line.answered()
	fmt.Fprint(t.Out, question)
	select {
	case <-ctx.Done():
		fmt.Fprintln(t.Out)
		return "", fmt.Errorf("no answer on the terminal: %w", context.Cause(ctx))
	case <-t.done:
		return "", fmt.Errorf("no answer on the terminal: %w", errTerminalClosed)
	case s, ok := <-t.lines:
		if !ok {
			return "", fmt.Errorf("no answer on the terminal: %w", t.readErr)
		}
		return strings.TrimRight(s, "\r\n"), nil
	}
}
