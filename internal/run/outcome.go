package run

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/termtext"
)

// Why says in one line why a run that did not complete stopped, "" for
// one that did. A refusal by --safe is said too, after any limit: a CI job
// watches for it.
func (r *Run) Why(res *loop.Result) string {
	var why string
	switch res.Status {
	case loop.StatusCompleted:
	case loop.StatusMaxSteps:
		limit := fmt.Sprintf("--max-steps %d", r.MaxSteps)
		if r.MaxSteps < r.Settings.MaxSteps.Value {
			limit = fmt.Sprintf("--mode %s allows %s", r.Mode, termtext.Plural(r.MaxSteps, "step", "steps"))
		}
		why = fmt.Sprintf("stopped after %s (%s): the model still called tools on the last step, so there is no answer", termtext.Plural(res.Steps, "step", "steps"), limit)
	case loop.StatusRepeatedCall:
		why = "stopped: the model made the same tool call, answered the same way, five times in a row with no file changed"
	case loop.StatusParseFailures:
		why = "stopped: three replies in a row did not follow the tool protocol"
	case loop.StatusSchemaFailed:
		why = fmt.Sprintf("stopped: %v", res.Err)
	case loop.StatusTimeout:
		why = fmt.Sprintf("stopped: --timeout %s reached", r.Timeout)
	case loop.StatusDenied:
		return refusals(res)
	default:
		err := res.Err
		if err == nil {
			err = errors.New("run ended without an answer")
		}
		why = err.Error()
		if r.NoKeyFallback(err) {
			why = fmt.Sprintf("no provider key is set (set one of %s), and Ollama on localhost, tried instead, did not answer at %s: %v",
				strings.Join(KeyVariables(), ", "), r.BaseURL, err)
		}
	}
	if res.Refused && (res.Status == loop.StatusCompleted || limited(res.Status)) {
		why = strings.TrimPrefix(why+"; ", "; ") + refusals(res)
	}
	return why
}

// NoKeyFallback reports whether err is the failure to reach Ollama on
// localhost, which the run tried only because no key was set: what the
// user lacks is a key, not a running Ollama.
func (r *Run) NoKeyFallback(err error) bool {
	return r.Settings.Provider.Source == noKeySource && errors.Is(err, providers.ErrConnect)
}

// limited reports whether a status is a limit the run reached.
func limited(status string) bool {
	switch status {
	case loop.StatusMaxSteps, loop.StatusRepeatedCall, loop.StatusParseFailures, loop.StatusSchemaFailed:
		return true
	}
	return false
}

// refusals names the calls the policy refused.
func refusals(res *loop.Result) string {
	var names []string
	for _, d := range res.Denials {
		names = append(names, d.Name)
	}
	return fmt.Sprintf("%d tool call(s) refused by policy: %s", len(res.Denials), strings.Join(names, ", "))
}
