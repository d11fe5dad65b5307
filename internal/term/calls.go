package term

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/termtext"
)

// Calls turns a run's events into the line each finished tool call leaves
// on a terminal, such as
//
//	· shell go test ./... (exit 1, 0.8s)
//
// so that the work stays on the screen once the status line moves on.
type Calls struct {
	args map[string]string // each started call's arguments, by id
}

// NewCalls starts with no call.
func NewCalls() *Calls { return &Calls{args: map[string]string{}} }

// Line is the line of a finished call, "" for any other event; failed is
// set for a call that failed (an error result, or a command's exit code
// other than 0), which the caller marks. It fits in width columns.
func (c *Calls) Line(ev records.Event, width int) (line string, failed bool) {
	switch ev.Type {
	case records.TypeToolStarted:
		c.args[ev.ID] = ev.Arguments
		return "", false
	case records.TypeToolFinished:
	default:
		return "", false
	}
	args := c.args[ev.ID]
	delete(c.args, ev.ID)
	took := formatElapsed(time.Duration(ev.DurationMS) * time.Millisecond)
	tail := fmt.Sprintf(" (%s)", took)
	failed = ev.IsError
	if code, ok := exitCode(ev.Content); ok {
		tail = fmt.Sprintf(" (exit %d, %s)", code, took)
		failed = failed || code != 0
	} else if ev.IsError {
		tail = fmt.Sprintf(" (failed: %s, %s)", termtext.Shorten(termtext.FirstLine(ev.Content), 60), took)
	}
	head := "· " + termtext.Safe(ev.Name) // the model names the tool
	room := width - 1 - len([]rune(head)) - len([]rune(tail)) - 1
	if what := shortArgs(args); what != "" && room > 8 {
		head += " " + termtext.Safe(termtext.Shorten(what, room-1)) // and "…"
	}
	return head + termtext.Safe(tail), failed
}

// exitCode reads the exit code a command's result starts with ("exit
// code: 1").
func exitCode(content string) (int, bool) {
	first, _, _ := strings.Cut(content, "\n")
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(first, "exit code:")))
	if !strings.HasPrefix(first, "exit code:") || err != nil {
		return 0, false
	}
	return n, true
}
