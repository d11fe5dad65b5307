package main

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"

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

// errWidth is the width of the terminal stderr is on: the kernel's word
// (bash does not export $COLUMNS), else $COLUMNS, else 80.
func errWidth(stdio *IO) int {
	if stdio.ErrWidth != nil {
		if n := stdio.ErrWidth(); n > 20 {
			return n
		}
	}
	if n, err := strconv.Atoi(stdio.Getenv("COLUMNS")); err == nil && n > 20 {
		return n
	}
	return 80
}

// stderrWidth asks the kernel for the width of the terminal stderr is on;
// 0 when it is not one. It is asked at each use: a pane can be resized.
func stderrWidth() int { return widthOf(int(os.Stderr.Fd())) }

// widthOf is the width of the terminal fd is on, 0 when it is not one.
func widthOf(fd int) int {
	ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
