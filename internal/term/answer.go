package term

import (
	"io"
	"strings"
)

// Answer streams a run's text to a terminal's stdout as it comes, sharing
// the terminal with the status line. Every step's text streams, and a
// step's text may turn out to be narration before tool calls rather than
// the answer; the text of a step after one that wrote starts after a
// blank line, so narration never runs into the answer.
//
// Step and Text are called from the run's one goroutine that reports
// events and text.
type Answer struct {
	w      io.Writer
	status *StatusLine

	step, textStep int  // the step running, and the one that wrote last
	streamed       bool // some text was written
	endsInNewline  bool // the last text written ended its line
}

// NewAnswer streams to w, clearing status before each write.
func NewAnswer(w io.Writer, status *StatusLine) *Answer {
	return &Answer{w: w, status: status}
}

// Step notes that step n has begun: its request was sent.
func (a *Answer) Step(n int) { a.step = n }

// Text writes text of the current step.
func (a *Answer) Text(text string) {
	if text == "" {
		return
	}
	a.status.Clear()
	// After an approval question the cursor is at the start of the line
	// below it, and the question already parts the texts: no blank line.
	if a.streamed && a.step != a.textStep && !a.status.afterQuestion() {
		sep := "\n\n"
		if a.endsInNewline || a.status.EndedLine() {
			sep = "\n"
		}
		io.WriteString(a.w, sep)
		a.status.Wrote(sep)
	}
	a.streamed, a.textStep = true, a.step
	a.endsInNewline = strings.HasSuffix(text, "\n")
	io.WriteString(a.w, text)
	a.status.Wrote(text)
}

// Streamed reports whether any text was written.
func (a *Answer) Streamed() bool { return a.streamed }
