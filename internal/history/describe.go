package history

import (
	"fmt"
	"io"
	"strings"

	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/termtext"
)

// Describe writes a kept run for a person, as `ask log show` prints it:
// where and how it ran, its prompt, each tool call (failed or refused
// ones marked) and its answer. The words of the model and of the tools are
// escaped: they cannot drive a terminal.
func Describe(w io.Writer, e Entry, events []records.Event) {
	fmt.Fprintf(w, "run %s, %s, in %s\n", e.ID, e.Time.Local().Format("2006-01-02 15:04:05"), termtext.Safe(e.Workdir))
	fmt.Fprintf(w, "%s %s, status %s\n", e.Provider, e.Model, e.Status)
	if e.ParentID != "" {
		fmt.Fprintf(w, "a subagent of run %s\n", e.ParentID)
	}
	next := "ask --resume " + e.ID + " to continue"
	if e.Status == records.StatusDeferred {
		next = "ask resume " + e.ID + " to decide its deferred calls"
	}
	fmt.Fprintf(w, "transcript: %s (ask replay it; %s)\n\n", e.Path, next)
	fmt.Fprintf(w, "prompt:\n%s\n", termtext.SafeLines(strings.TrimRight(e.Prompt, "\n")))
	failed := map[string]bool{}
	for _, ev := range events {
		if ev.Type == records.TypeToolFinished && ev.IsError {
			failed[ev.ID] = true
		}
	}
	for _, ev := range events {
		call := fmt.Sprintf("  step %d: %s %s", ev.Step, ev.Name, termtext.Safe(termtext.Shorten(ev.Arguments, 100)))
		switch {
		case ev.Type == records.TypeToolStarted && failed[ev.ID]:
			fmt.Fprintln(w, call+" (failed)")
		case ev.Type == records.TypeToolStarted:
			fmt.Fprintln(w, call)
		case ev.Type == records.TypeToolDenied:
			fmt.Fprintf(w, "%s (refused: %s)\n", call, termtext.Safe(ev.Reason))
		case ev.Type == records.TypeToolDeferred:
			fmt.Fprintf(w, "%s (deferred, call %s: %s)\n", call, termtext.Safe(ev.ID), termtext.Safe(ev.Reason))
		}
	}
	for _, ev := range events {
		for _, c := range ev.Children {
			fmt.Fprintf(w, "  subagent %s: run %s, %s\n", termtext.Safe(c.Name), c.ID, c.Status)
		}
	}
	if e.Answer != "" {
		fmt.Fprintf(w, "\nanswer:\n%s\n", termtext.SafeLines(strings.TrimRight(e.Answer, "\n")))
	}
}
