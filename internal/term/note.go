package term

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/termtext"
)

// NoteLine is the line stderr shows for an event of a run, after "ask: ",
// or "" for none: retries, denials and changed files always, every
// request and tool call only when verbose. What a model wrote is shown
// with termtext.Safe.
func NoteLine(ev records.Event, verbose bool) string {
	switch ev.Type {
	case records.TypeRetry:
		return fmt.Sprintf("retry %d in %s: %s", ev.Attempt, time.Duration(ev.DelayMS)*time.Millisecond, ev.Error)
	case records.TypeRequest:
		if verbose {
			return fmt.Sprintf("step %d: POST %s (%d bytes)", ev.Step, ev.URL, len(ev.Body))
		}
	case records.TypeAssistant:
		if verbose && ev.Usage != nil {
			return fmt.Sprintf("step %d: %s", ev.Step, StepUsage(*ev.Usage))
		}
	case records.TypeToolStarted:
		if verbose {
			return fmt.Sprintf("step %d: %s %s", ev.Step, ev.Name, termtext.Safe(termtext.Shorten(ev.Arguments, 120)))
		}
	case records.TypeToolFinished:
		if verbose && ev.IsError {
			return fmt.Sprintf("step %d: %s failed: %s", ev.Step, ev.Name, termtext.Safe(termtext.Shorten(ev.Content, 200)))
		}
	case records.TypeToolDenied:
		return fmt.Sprintf("step %d: %s denied: %s", ev.Step, ev.Name, ev.Reason)
	case records.TypeToolDeferred:
		return fmt.Sprintf("step %d: %s deferred (call %s): %s", ev.Step, ev.Name, termtext.Safe(ev.ID), termtext.Safe(ev.Reason))
	case records.TypeSkillActivated:
		line := fmt.Sprintf("step %d: skill %s loaded", ev.Step, ev.Name)
		if len(ev.AllowedTools) > 0 {
			line += ": only " + strings.Join(ev.AllowedTools, " ") + " while it is active"
		}
		return termtext.Safe(line)
	case records.TypeFileChanged:
		return termtext.Safe(ev.Change.String())
	case records.TypeContextCompacted:
		return CompactionLine(*ev.Compaction)
	case records.TypeNetwork:
		// A refused connection always: the person learns which host to
		// allow. An allowed one when verbose. The host is the command's.
		switch {
		case ev.Allowed != nil && !*ev.Allowed:
			return fmt.Sprintf("step %d: network: %s refused (not an --allow-host host, or not port 80 or 443)", ev.Step, termtext.Safe(net.JoinHostPort(ev.Host, strconv.Itoa(ev.Port))))
		case verbose:
			return fmt.Sprintf("step %d: network: %s", ev.Step, termtext.Safe(net.JoinHostPort(ev.Host, strconv.Itoa(ev.Port))))
		}
	}
	return ""
}

// CompactionLine says what a compaction did, such as "compacted the
// conversation to fit the model's 8000-token window: 6600 → 3300 tokens
// (5 tool results pruned, 12 steps summarised)".
func CompactionLine(c records.Compaction) string {
	var did []string
	if c.Pruned > 0 {
		did = append(did, termtext.Plural(c.Pruned, "tool result", "tool results")+" pruned")
	}
	if c.Summarised > 0 {
		did = append(did, termtext.Plural(c.Summarised, "step", "steps")+" summarised")
	}
	if c.Cut > 0 {
		did = append(did, termtext.Plural(c.Cut, "long tool result", "long tool results")+" cut")
	}
	why := ""
	if c.Trigger == "overflow" {
		why = ", after the provider answered that it was too long"
	}
	return fmt.Sprintf("compacted the conversation to fit the model's %d-token window%s: %d → %d tokens (%s)",
		c.Window, why, c.BeforeTokens, c.AfterTokens, strings.Join(did, ", "))
}
