package run

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/jsonpos"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/termtext"
)

// Outcome is the exit code of how a run ended (DESIGN §7), which
// run.finished records, and the line that says why (Why).
func (r *Run) Outcome(res *loop.Result) (int, string) {
	why := r.Why(res)
	var code int
	switch res.Status {
	case loop.StatusCompleted, loop.StatusPending:
		code = fault.ExitOK
	case loop.StatusMaxSteps, loop.StatusRepeatedCall, loop.StatusParseFailures, loop.StatusSchemaFailed,
		loop.StatusCheckFailed, loop.StatusBudget, loop.StatusHookStopped:
		code = fault.ExitLimit
	case loop.StatusTimeout:
		code = fault.ExitTimeout
	case loop.StatusInterrupted:
		code, why = fault.ExitInterrupted, "interrupted"
		var cause exitCoder
		if errors.As(res.Err, &cause) {
			code, why = cause.ExitCode(), cause.Error()
		}
	case loop.StatusDenied:
		code = fault.ExitRefused
	case loop.StatusDeferred:
		code = fault.ExitPaused
	default:
		code = ExitCode(res.Err)
		if r.NoKeyFallback(res.Err) {
			code = fault.ExitAuth
		}
	}
	// A --safe refusal is what a CI job running with --safe watches for, so
	// it also wins over a limit: the run tried something it must not.
	if res.Refused && (code == fault.ExitOK || code == fault.ExitLimit) {
		code = fault.ExitRefused
	}
	return code, why
}

// exitCoder is an error that knows its exit code: the signal that stopped
// a run (130 for SIGINT, 143 for SIGTERM).
type exitCoder interface {
	error
	ExitCode() int
}

// ExitCode is the exit code of an error that stopped a run or its
// building, by DESIGN §7.
func ExitCode(err error) int {
	var coder exitCoder
	var apiErr *providers.APIError
	var keyErr *catalog.MissingKeyError
	var badInput *jsonpos.Error
	kind, isFault := fault.KindOf(err)
	switch {
	case errors.As(err, &coder):
		return coder.ExitCode()
	case errors.As(err, &badInput):
		return fault.ExitUsage
	case isFault:
		return kind.Code()
	case errors.As(err, &keyErr):
		return fault.ExitAuth
	case errors.As(err, &apiErr):
		if apiErr.IsAuth() {
			return fault.ExitAuth
		}
		return fault.ExitProvider
	case errors.Is(err, loop.ErrTimeout):
		return fault.ExitTimeout
	case errors.Is(err, loop.ErrInterrupted), errors.Is(err, context.Canceled):
		return fault.ExitInterrupted
	case errors.Is(err, providers.ErrMalformed), errors.Is(err, providers.ErrStreamCut), errors.Is(err, providers.ErrIdle),
		errors.Is(err, providers.ErrConnect):
		return fault.ExitProvider
	}
	return fault.ExitFailure
}

// Why says in one line why a run that did not complete stopped, "" for
// one that did. A refusal by --safe is said too, after any limit: a CI job
// watches for it.
func (r *Run) Why(res *loop.Result) string {
	var why string
	switch res.Status {
	case loop.StatusCompleted, loop.StatusPending:
	case loop.StatusMaxSteps:
		limit := fmt.Sprintf("--max-steps %d", r.MaxSteps)
		if strings.HasPrefix(r.Settings.MaxSteps.Source, "default") {
			limit = fmt.Sprintf("--mode %s's default of %d; give --max-steps for more", r.Mode, r.MaxSteps)
		}
		if r.MaxSteps < r.Settings.MaxSteps.Value || r.Mode == policy.ModeAsk && strings.HasPrefix(r.Settings.MaxSteps.Source, "default") {
			limit = fmt.Sprintf("--mode %s allows %s", r.Mode, termtext.Plural(r.MaxSteps, "step", "steps"))
		}
		why = fmt.Sprintf("stopped after %s (%s): the model still called tools on the last step, so there is no answer", termtext.Plural(res.Steps, "step", "steps"), limit)
		if res.Err != nil {
			// The model answered; a check or a Stop hook sent it back.
			why = fmt.Sprintf("stopped after %s (%s): %v", termtext.Plural(res.Steps, "step", "steps"), limit, res.Err)
		}
	case loop.StatusRepeatedCall:
		why = "stopped: the model made the same tool call, answered the same way, five times in a row with no file changed"
	case loop.StatusParseFailures:
		why = "stopped: three replies in a row did not follow the tool protocol"
	case loop.StatusSchemaFailed, loop.StatusCheckFailed, loop.StatusBudget:
		why = fmt.Sprintf("stopped: %v", res.Err)
	case loop.StatusHookStopped:
		why = fmt.Sprint(res.Err) // "stopped by a hook (EVENT): its stopReason"
	case loop.StatusTimeout:
		why = fmt.Sprintf("stopped: --timeout %s reached", r.Timeout)
	case loop.StatusDenied:
		return refusals(res)
	case loop.StatusDeferred:
		why = fmt.Sprintf("paused: %s for ask resume", termtext.Plural(len(res.Deferred), "call waits", "calls wait"))
	default:
		err := res.Err
		if err == nil {
			err = errors.New("run ended without an answer")
		}
		why = err.Error() + r.hint(err)
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

// hint is what to try after a provider's error, "" when there is nothing
// to say: where a rejected key came from, and a base URL that lacks the
// /v1 its protocol's endpoints sit under.
func (r *Run) hint(err error) string {
	var apiErr *providers.APIError
	if !errors.As(err, &apiErr) {
		return ""
	}
	switch {
	case apiErr.IsAuth() && r.Settings.Key.Source != "":
		return fmt.Sprintf(" (the key came from %s)", r.Settings.Key.Source)
	case apiErr.StatusCode == 404 && strings.HasSuffix(r.Provider.BaseURL, "/v1") && !strings.Contains(r.BaseURL, "/v1"):
		return fmt.Sprintf(" (the base URL %s has no /v1, which %s's endpoints sit under: try --base-url %s/v1)",
			providers.RedactURL(r.BaseURL), r.Provider.Name, strings.TrimSuffix(providers.RedactURL(r.BaseURL), "/"))
	}
	return ""
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
	case loop.StatusMaxSteps, loop.StatusRepeatedCall, loop.StatusParseFailures, loop.StatusSchemaFailed, loop.StatusCheckFailed, loop.StatusBudget,
		loop.StatusHookStopped:
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
	return fmt.Sprintf("%s refused by policy: %s", termtext.Plural(len(res.Denials), "tool call", "tool calls"), strings.Join(names, ", "))
}
