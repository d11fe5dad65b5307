package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/hooks"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/tools"
)

// useHooks gives the run the config file's hooks, unless --no-hooks: the
// PreToolUse hooks advise the policy. They run outside the sandbox, as
// the user's own programs, with the tools' environment (no keys).
func (r *Run) useHooks(pol *policy.Policy, root *tools.Root) {
	s := r.Settings
	if s.NoHooks.Value || len(s.Hooks.Value) == 0 {
		return
	}
	for _, w := range s.Hooks.Value.Skipped() {
		r.note("warning: %s", w)
	}
	r.hooks = &hooks.Runner{Config: s.Hooks.Value, Dir: root.Dir(), Env: root.ChildEnv(), PermissionMode: "default", IsMCP: func(tool string) bool { return r.mcpTools[tool] }}
	switch {
	case s.Yes.Value:
		r.hooks.PermissionMode = "bypassPermissions"
	case r.Mode == policy.ModePlan:
		r.hooks.PermissionMode = "plan"
	}
	pol.Advisor = hookAdvisor{r.hooks}
}

// hookAdvisor puts each call to the PreToolUse hooks.
type hookAdvisor struct{ h *hooks.Runner }

func (a hookAdvisor) Advise(ctx context.Context, calls []providers.ToolCall) []policy.Advice {
	out := make([]policy.Advice, len(calls))
	for i, c := range calls {
		v := a.h.Run(ctx, hooks.PreToolUse, hooks.Input{ToolName: c.Name, ToolInput: toolInput(c.Arguments), ToolUseID: c.ID})
		switch v.Decision {
		case hooks.Allow:
			out[i] = policy.Advice{Decision: policy.AdviseAllow, Reason: v.Reason}
		case hooks.Ask:
			out[i] = policy.Advice{Decision: policy.AdviseAsk, Reason: v.Reason}
		case hooks.Defer:
			out[i] = policy.Advice{Decision: policy.AdviseDefer, Reason: v.Reason}
		case hooks.Deny, hooks.Block:
			out[i] = policy.Advice{Decision: policy.AdviseDeny, Reason: v.Reason}
		}
	}
	return out
}

// toolInput is a call's arguments as the hooks' tool_input: the object
// the model wrote, or, when that is not JSON, the text as a string.
func toolInput(arguments string) json.RawMessage {
	if json.Valid([]byte(arguments)) {
		return json.RawMessage(arguments)
	}
	b, _ := json.Marshal(arguments)
	return b
}

// hookedTools runs the PostToolUse hooks after each call: a block's
// reason, and what a hook adds as additionalContext, go to the model with
// the call's result.
type hookedTools struct {
	loop.Toolbox
	h *hooks.Runner
}

func (t hookedTools) Call(ctx context.Context, name, arguments string) (string, bool) {
	content, isErr := t.Toolbox.Call(ctx, name, arguments)
	if !t.h.Has(hooks.PostToolUse) {
		return content, isErr
	}
	resp := map[string]any{"content": content, "is_error": isErr, "success": !isErr}
	v := t.h.Run(ctx, hooks.PostToolUse, hooks.Input{ToolName: name, ToolInput: toolInput(arguments), ToolResponse: resp})
	if v.Decision == hooks.Block {
		content += "\n\nPostToolUse hook: " + v.Reason
	}
	if v.Context != "" {
		content += "\n\nPostToolUse hook: " + v.Context
	}
	return content, isErr
}

// CheckArguments passes the check on when the tools have one.
func (t hookedTools) CheckArguments(name, arguments string) error {
	if c, ok := t.Toolbox.(loop.ArgumentChecker); ok {
		return c.CheckArguments(name, arguments)
	}
	return nil
}

// startHooks readies the hooks for the run id and runs SessionStart and
// UserPromptSubmit: the prompt comes back with what they add to it, or an
// error when a UserPromptSubmit hook blocks it.
func (r *Run) startHooks(ctx context.Context, id, transcript string, rec *records.Recorder, prompt string, resumed bool) (string, error) {
	h := r.hooks
	if h == nil {
		return prompt, nil
	}
	h.SessionID, h.TranscriptPath = id, transcript
	h.OnRecord = func(hr hooks.Record) {
		rec.Emit(records.Event{Type: records.TypeHook, ID: hr.ToolUseID, Name: hr.Tool, HookEvent: hr.Event, Command: hr.Command, Decision: hr.Decision, Reason: hr.Reason})
		switch {
		case hr.Decision == hooks.Error:
			r.note("warning: %s", hr.Reason)
		case hr.Event == hooks.Stop && hr.Decision == hooks.Block:
			r.note("the Stop hook %q sent the model back: %s", hr.Command, hr.Reason)
		}
	}
	source := "startup"
	if r.Settings.Conversation != nil || resumed {
		source = "resume"
	}
	start := h.Run(ctx, hooks.SessionStart, hooks.Input{Source: source})
	if resumed {
		// A pending run carried on: its prompt went with its first
		// request, and nothing more can be added to the held one.
		return prompt, nil
	}
	submit := h.Run(ctx, hooks.UserPromptSubmit, hooks.Input{Prompt: prompt})
	if submit.Decision == hooks.Block {
		return "", fault.Usagef("the prompt was blocked by a UserPromptSubmit hook: %s", submit.Reason)
	}
	for _, c := range []string{start.Context, submit.Context} {
		if c != "" {
			prompt += "\n\n" + c
		}
	}
	return prompt, nil
}

// sessionEndGrace bounds the SessionEnd hooks of a run that was stopped
// (--timeout, Ctrl-C): they still run, but do not hold its exit long.
const sessionEndGrace = 5 * time.Second

// stopOnHook makes a hook's "continue": false end the run: ctx's cancel
// gets loop.ErrHookStopped with the hook's reason, and the run ends
// hook_stopped.
func (r *Run) stopOnHook(cancel context.CancelCauseFunc) {
	if r.hooks == nil {
		return
	}
	r.hooks.OnStop = func(event, reason string) {
		cancel(fmt.Errorf("%w (%s): %s", loop.ErrHookStopped, event, reason))
	}
}

// endHooks runs SessionEnd.
func (r *Run) endHooks(ctx context.Context) {
	if r.hooks == nil {
		return
	}
	end := context.WithoutCancel(ctx)
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		end, cancel = context.WithTimeout(end, sessionEndGrace)
		defer cancel()
	}
	r.hooks.Run(end, hooks.SessionEnd, hooks.Input{EndReason: "other"})
}

// checkTail is how much of a failed check's output goes back to the model.
const checkTail = 4 << 10

// verifier is the loop's Verify: the Stop hooks, then --until's check.
// A Stop hook's block sends the model back with its reason; a failed
// check sends it back with the check's output. Each goes back at most
// --max-rounds times: a Stop hook that always blocks, like a check that
// never passes, ends the run check_failed, with the model's last answer.
func (r *Run) verifier(rec *records.Recorder) func(ctx context.Context, answer string) loop.Verdict {
	until := r.Settings.Until.Value
	if !r.hooks.Has(hooks.Stop) && until == "" {
		return nil
	}
	maxRounds := max(r.Settings.MaxRounds.Value, 1)
	rounds, stopRounds, sentBack := 0, 0, false
	return func(ctx context.Context, answer string) loop.Verdict {
		if r.hooks.Has(hooks.Stop) {
			active := sentBack
			v := r.hooks.Run(ctx, hooks.Stop, hooks.Input{StopHookActive: &active})
			if v.Stop {
				return loop.Verdict{Status: loop.StatusHookStopped, Err: context.Cause(ctx)}
			}
			if sentBack = v.Decision == hooks.Block; sentBack {
				stopRounds++
				if stopRounds > maxRounds {
					return loop.Verdict{Status: loop.StatusCheckFailed,
						Err: fmt.Errorf("the Stop hook still sent the model back after %d rounds (--max-rounds %d): %s", maxRounds, maxRounds, v.Reason)}
				}
				return loop.Verdict{Again: v.Reason}
			}
		}
		if until == "" {
			return loop.Verdict{}
		}
		rounds++
		start := time.Now()
		code, output, err := r.root.RunCheck(ctx, until)
		took := time.Since(start)
		if ctx.Err() != nil {
			// --timeout or Ctrl-C stopped the check: that, not its exit
			// status, is what the line says and how the run ends.
			return r.checkStopped(ctx, rec, until, rounds, maxRounds, took)
		}
		if err != nil {
			// Refused by the sandbox, say: no round can pass.
			return loop.Verdict{Status: loop.StatusError, Err: fmt.Errorf("--until %q could not run: %w", until, err)}
		}
		passed := code == 0
		rec.Emit(records.Event{Type: records.TypeCheckFinished, Command: until, Round: rounds, Passed: &passed,
			CheckExit: &code, Content: tail(output, checkTail), DurationMS: took.Milliseconds()})
		verdict := "passed"
		if !passed {
			verdict = fmt.Sprintf("failed (exit %d)", code)
		}
		r.note("check %d/%d: %s %s, %.1fs", rounds, maxRounds, until, verdict, took.Seconds())
		switch {
		case passed:
			return loop.Verdict{}
		case rounds >= maxRounds:
			return loop.Verdict{Status: loop.StatusCheckFailed,
				Err: fmt.Errorf("the check %q still failed after %d rounds (--max-rounds %d): exit %d", until, rounds, maxRounds, code)}
		}
		return loop.Verdict{Again: fmt.Sprintf("The check `%s` failed (exit %d), so the task is not done. Fix what it reports and answer again. Its output (the last %d bytes):\n\n%s",
			until, code, checkTail, tail(output, checkTail))}
	}
}

// checkStopped ends a run whose check --timeout or an interruption cut
// short: the check line and event say so, and the status is the cause's
// (timeout, exit 124; interrupted, 130).
func (r *Run) checkStopped(ctx context.Context, rec *records.Recorder, until string, round, maxRounds int, took time.Duration) loop.Verdict {
	cause := context.Cause(ctx)
	status, why := loop.StatusInterrupted, "interrupted"
	switch {
	case errors.Is(cause, loop.ErrTimeout):
		status, why = loop.StatusTimeout, fmt.Sprintf("stopped at --timeout %s", r.Timeout)
	case errors.Is(cause, loop.ErrHookStopped):
		status, why = loop.StatusHookStopped, "stopped by a hook"
	}
	passed := false
	rec.Emit(records.Event{Type: records.TypeCheckFinished, Command: until, Round: round, Passed: &passed,
		Content: why, DurationMS: took.Milliseconds()})
	r.note("check %d/%d: %s %s, %.1fs", round, maxRounds, until, why, took.Seconds())
	return loop.Verdict{Status: status, Err: cause}
}

// tail is the last n bytes of s, cut at a line start where one is near.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	return s
}

// compactHooks runs the PreCompact and PostCompact hooks around each
// compaction, in Claude Code's form (trigger "auto": ask compacts on its
// own); nil without such hooks. They are told, not asked: a compaction
// keeps the run within its window.
func (r *Run) compactHooks() func(context.Context, loop.CompactNote) {
	if !r.hooks.Has(hooks.PreCompact) && !r.hooks.Has(hooks.PostCompact) {
		return nil
	}
	return func(ctx context.Context, n loop.CompactNote) {
		if !n.Done {
			none := ""
			r.hooks.Run(ctx, hooks.PreCompact, hooks.Input{Trigger: "auto", CustomInstructions: &none})
			return
		}
		r.hooks.Run(ctx, hooks.PostCompact, hooks.Input{Trigger: "auto", CompactSummary: n.Summary})
	}
}
