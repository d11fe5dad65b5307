package main

import (
	"strconv"

	"github.com/ask-cli/ask/internal/term"
)

// colorChoice is the --color setting with where it came from, for
// `ask config`.
type colorChoice struct {
	mode   string // term.ColorAuto, ColorAlways or ColorNever
	source string
}

// statusFor is the status line of a run: on a terminal stderr unless quiet,
// in the run's colours, as wide as $COLUMNS says (80 without it).
func statusFor(stdio *IO, quiet bool) *term.StatusLine {
	width := 80
	if n, err := strconv.Atoi(stdio.Getenv("COLUMNS")); err == nil && n > 20 {
		width = n
	}
	return term.NewStatusLine(stdio.Err, stdio.ErrTTY && !quiet, stdio.paint, width)
}
