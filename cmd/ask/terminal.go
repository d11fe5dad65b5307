package main

import (
	"os"

	"github.com/ask-cli/ask/internal/term"
)

// colorChoice is the --color setting with where it came from, for
// `ask config`.
type colorChoice struct {
	mode   string // term.ColorAuto, ColorAlways or ColorNever
	source string
}

// statusFor is the status line of a run: on a terminal stderr unless quiet,
// in the run's colours, as wide as the terminal is.
func statusFor(stdio *IO, quiet bool) *term.StatusLine {
	return term.NewStatusLine(stdio.Err, stdio.ErrTTY && !quiet, stdio.paint, errWidth(stdio))
}

// errWidth is the width of the terminal stderr is on (term.Columns).
func errWidth(stdio *IO) int { return term.Columns(stdio.ErrWidth, stdio.Getenv) }

// stderrWidth asks the kernel for the width of the terminal stderr is on;
// 0 when it is not one.
func stderrWidth() int { return term.Width(int(os.Stderr.Fd())) }
