package loop

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
)

// Outcome is what came of one call of a step.
type Outcome struct {
	Result providers.ToolResult
	// Denied: the gate did not allow the call. An unreadable call is never
	// put to the gate, so it is never denied.
	Denied bool
	// Deferred: the gate left the call for `ask resume`; it did not run,
	// and its Result only holds its place.
	Deferred bool
}

// CallHooks let the user of RunCalls watch the calls of one step. Every
// hook may be nil. OnUnreadable, OnDenied and OnDeferred are called in call order, on
// the goroutine that called RunCalls; OnStart and OnFinish on the goroutine
// running the call (or, for a call abandoned after cancellation, on
// RunCalls' own), one at a time.
type CallHooks struct {
	OnUnreadable func(c providers.ToolCall)
	OnDenied     func(c providers.ToolCall, v policy.Verdict)
	OnDeferred   func(c providers.ToolCall, v policy.Verdict)
	OnStart      func(c providers.ToolCall)
	OnFinish     func(c providers.ToolCall, r providers.ToolResult, took time.Duration)
}

// DefaultToolGrace is how long RunCalls waits, once its context has
// ended, for calls still running: a tool that ignores cancellation (a read
// blocked in the kernel, a stuck server) is then answered without it, so
// that --timeout and Ctrl-C still end the run. It is longer than the
// built-in tools take to stop (the shell waits up to 2 s for the pipes a
// daemon holds).
const DefaultToolGrace = 3 * time.Second

// RunCalls runs the calls of one step as the loop does, for the loop and
// for `ask tools run`: the gate decides all the readable calls first (a nil
// gate allows them), the allowed ones run concurrently, at most
// toolsInParallel at a time, and every call is answered, in call order. A
// denied call is answered with "denied: " and the gate's reason, an
// unreadable one with why it could not be read, and one still running
// DefaultToolGrace after ctx ends with an error saying so.
func RunCalls(ctx context.Context, gate Gate, box Toolbox, calls []providers.ToolCall, h CallHooks) []Outcome {
	return runCalls(ctx, gate, box, calls, h, DefaultToolGrace)
}

func runCalls(ctx context.Context, gate Gate, box Toolbox, calls []providers.ToolCall, h CallHooks, grace time.Duration) []Outcome {
	calls = refuseAmbiguous(box, calls)
	verdicts := check(ctx, gate, calls)
	out := make([]Outcome, len(calls))
	// mu guards the outcomes and the hooks of running calls against their
	// abandonment: once abandoned, a call that returns late changes
	// nothing and reports nothing, since the run may have finished.
	var (
		mu        sync.Mutex
		abandoned bool
		finished  = make([]bool, len(calls))
		started   = make([]time.Time, len(calls))
		running   []int
	)
	var wg sync.WaitGroup
	sem := make(chan struct{}, toolsInParallel)
	for i, c := range calls {
		out[i].Result = providers.ToolResult{ID: c.ID, Name: c.Name}
		if c.Unreadable != "" {
			// Answered with why it could not be read; nothing runs.
			out[i].Result.Content, out[i].Result.IsError = c.Unreadable, true
			if h.OnUnreadable != nil {
				h.OnUnreadable(c)
			}
			continue
		}
		if v := verdicts[i]; v.Deferred && !v.Allowed {
			out[i].Result.Content, out[i].Result.IsError = deferredResultText+v.Reason, true
			out[i].Deferred = true
			if h.OnDeferred != nil {
				h.OnDeferred(c, v)
			}
			continue
		}
		if v := verdicts[i]; !v.Allowed {
			out[i].Result.Content, out[i].Result.IsError = deniedResultText+v.Reason, true
			out[i].Denied = true
			if h.OnDenied != nil {
				h.OnDenied(c, v)
			}
			continue
		}
		running = append(running, i)
		wg.Add(1)
		go func(i int, c providers.ToolCall) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			mu.Lock()
			if abandoned {
				mu.Unlock()
				return
			}
			started[i] = time.Now()
			if h.OnStart != nil {
				h.OnStart(c)
			}
			mu.Unlock()
			content, isErr := box.Call(context.WithValue(ctx, callIDKey{}, c.ID), c.Name, c.Arguments)
			mu.Lock()
			defer mu.Unlock()
			if abandoned {
				return
			}
			out[i].Result.Content, out[i].Result.IsError = content, isErr
			finished[i] = true
			if h.OnFinish != nil {
				h.OnFinish(c, out[i].Result, time.Since(started[i]))
			}
		}(i, c)
	}
	if waitOrAbandon(ctx, &wg, grace) {
		return out
	}
	mu.Lock()
	defer mu.Unlock()
	abandoned = true
	for _, i := range running {
		if finished[i] {
			continue
		}
		res := &out[i].Result
		res.Content = fmt.Sprintf("stopped: the run was cancelled (%v) and the tool did not stop within %s, so it has no result", context.Cause(ctx), grace)
		res.IsError = true
		var took time.Duration
		if !started[i].IsZero() {
			took = time.Since(started[i])
		}
		if h.OnFinish != nil {
			h.OnFinish(calls[i], *res, took)
		}
	}
	return out
}

type callIDKey struct{}

// CallID is the id of the call a Toolbox.Call's ctx is for, "" outside
// one: what ties the tool's own work (an MCP request) to the call's span.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

// ArgumentChecker is a Toolbox that refuses arguments the gate and the
// tool could read two ways (*tools.Registry does).
type ArgumentChecker interface {
	CheckArguments(name, arguments string) error
}

// refuseAmbiguous marks as unreadable the calls whose arguments the box
// refuses, so that they are answered with why, and neither a person nor a
// rule is asked about a value the tool would not see.
func refuseAmbiguous(box Toolbox, calls []providers.ToolCall) []providers.ToolCall {
	ac, ok := box.(ArgumentChecker)
	if !ok {
		return calls
	}
	out := slices.Clone(calls)
	for i, c := range out {
		if c.Unreadable != "" {
			continue
		}
		if err := ac.CheckArguments(c.Name, c.Arguments); err != nil {
			out[i].Unreadable = err.Error()
		}
	}
	return out
}

// waitOrAbandon waits for the calls of wg, or, once ctx has ended, for at
// most grace more. It reports whether they all returned; if not, the
// goroutine waiting on wg stays until they do (a CLI exits soon after).
func waitOrAbandon(ctx context.Context, wg *sync.WaitGroup, grace time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// check asks the gate about the calls that can run; unreadable calls are
// never put to it (nobody should approve a call that cannot run).
func check(ctx context.Context, gate Gate, calls []providers.ToolCall) []policy.Verdict {
	verdicts := make([]policy.Verdict, len(calls))
	var readable []providers.ToolCall
	var at []int
	for i, c := range calls {
		if c.Unreadable == "" {
			readable, at = append(readable, c), append(at, i)
		}
	}
	if gate == nil {
		for _, i := range at {
			verdicts[i].Allowed = true
		}
		return verdicts
	}
	for k, v := range gate.Check(ctx, readable) {
		verdicts[at[k]] = v
	}
	return verdicts
}
