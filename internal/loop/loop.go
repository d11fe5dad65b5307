// Package loop runs the tool-calling loop of DESIGN §5: call the model, run
// the tools it asks for under a policy, feed every result back, and stop on
// an answer or a limit. It knows no provider and no tool by name: the model
// and the tools come in through small interfaces.
package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/termtext"
)

// Model sends one request and reads the reply. *providers.Caller is the HTTP
// implementation.
type Model interface {
	Call(ctx context.Context, req providers.Request, h providers.Hooks) (*providers.Turn, error)
	// CurrentProtocol is the protocol the model speaks now, which renders
	// the prompt and tool results into its history. The loop asks every
	// time, so that a model that switches protocol during a run (to the
	// text tool protocol, when a provider refuses tools) is followed.
	CurrentProtocol() providers.Protocol
}

// Toolbox runs one validated tool call. *tools.Registry implements it.
type Toolbox interface {
	Call(ctx context.Context, name, arguments string) (content string, isError bool)
}

// Gate decides which calls of one step may run. The calls of a step are
// decided together so that a person can approve them at once.
type Gate interface {
	Check(ctx context.Context, calls []providers.ToolCall) []policy.Verdict
}

// Run statuses, as recorded in run.finished.
const (
	StatusCompleted     = "completed"
	StatusMaxSteps      = "max_steps"
	StatusRepeatedCall  = "repeated_call"
	StatusParseFailures = "parse_failures"
	StatusTimeout       = "timeout"
	StatusInterrupted   = "interrupted"
	StatusDenied        = "denied"
	StatusError         = "error"
	// StatusSchemaFailed: the final answer never matched Config.Schema.
	StatusSchemaFailed = "schema_failed"
	// StatusCheckFailed: --until's check never passed (Config.Verify).
	StatusCheckFailed = "check_failed"
	// StatusBudget: the run's token or cost budget ran out (Config.Budget).
	StatusBudget = "budget"
	// StatusPending: the run stopped while its request waits in a
	// provider's batch (ask batch --no-wait); Config.Resume carries it on.
	StatusPending = "pending"
	// StatusHookStopped: a hook answered "continue": false (the caller
	// ends the context with ErrHookStopped).
	StatusHookStopped = "hook_stopped"
	// StatusDeferred: a call was deferred (DESIGN §9, Pauses); the run
	// waits for `ask resume`, and Config.Resume's Paused carries it on.
	StatusDeferred = records.StatusDeferred
)

// Causes the caller attaches to its context so that the loop can tell a
// timeout from a Ctrl-C.
var (
	ErrTimeout     = errors.New("timeout reached")
	ErrInterrupted = errors.New("interrupted")
	// ErrPending ends a run whose request was left in a provider's batch:
	// it stops with StatusPending, to be resumed.
	ErrPending = errors.New("the request waits in a provider's batch")
	// ErrHookStopped, wrapped with the hook's reason, ends a run that a
	// hook stopped: StatusHookStopped.
	ErrHookStopped = errors.New("stopped by a hook")
)

// LastStepNote ends the system prompt of the last step a limit allows,
// whose request offers no tools.
const LastStepNote = "This is the last step the run allows: no tool can be called now. Answer now, with what you have found so far, and say what is left undone if anything is."

// Limits of DESIGN §5 that are not flags.
const (
	// repeatLimit steps in a row with the same calls answered the same
	// way, and no file changed, stop the run: a stuck model. Re-running
	// the tests after each edit is work, so a change resets the count.
	repeatLimit     = 5
	parseFailLimit  = 3 // unparseable text-protocol replies in a row
	toolsInParallel = 8
	// DefaultMaxSteps is agent mode's; policy.DefaultMaxSteps gives each
	// mode's.
	DefaultMaxSteps = policy.AgentModeMaxSteps
	// DefaultTimeout bounds a whole invocation; 0 means no limit
	// (WithTimeout).
	DefaultTimeout   = 30 * time.Minute
	deniedResultText = "denied: "
	// deferredResultText begins what holds a deferred call's place; it
	// is never sent, since no request follows a deferral.
	deferredResultText = "deferred: "
)

// WithTimeout bounds ctx by --timeout: when d passes, ctx ends with
// ErrTimeout as its cause, so that the run ends StatusTimeout. A d of 0
// (or less) means no limit.
func WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, ErrTimeout)
}

// Config is one run.
type Config struct {
	Model   Model
	System  string
	History []json.RawMessage // an earlier conversation to continue
	Prompt  string
	// Attachments go with the prompt, in the protocol's own form.
	Attachments []providers.Attachment
	Tools       []providers.Tool // declared to the model
	Toolbox     Toolbox
	Gate        Gate // nil allows every call
	MaxSteps    int
	Stream      bool
	MaxTokens   int
	// Schema, when set, is a JSON Schema the final answer must match: it
	// goes to the provider with every request, the answer is validated
	// here, and an answer that does not match is sent back with the
	// errors, up to schemaRetries times and within MaxSteps.
	Schema json.RawMessage

	// ToolGrace is how long calls still running when ctx ends are waited
	// for before they are answered without their tool; 0 means
	// DefaultToolGrace.
	ToolGrace time.Duration

	// Changes, when set, counts the files the run has changed so far: a
	// change resets the stuck-model count.
	Changes func() int

	// Verify, when set, is asked about every final answer (one that
	// matched Schema): a Stop hook, --until's check. Its Again sends the
	// model back to work; its Status ends the run so.
	Verify func(ctx context.Context, answer string) Verdict
	// Budget, when set, is asked before every request after the first,
	// with what the run has used so far and what the last request used.
	Budget func(spent, last providers.Usage) BudgetState

	// Resume, when set, carries on a run that stopped pending: History is
	// the conversation as its held request sent it, Prompt is not used.
	Resume *Resume

	// Window is the model's input window in tokens, 0 when unknown:
	// the run compacts before a request would fill CompactAt percent of
	// it (0: DefaultCompactAt), or with NoCompact ends at the window.
	// OnCompact is told when a compaction starts and ends.
	Window    int
	CompactAt int
	NoCompact bool
	OnCompact func(context.Context, CompactNote)

	Recorder *records.Recorder
	// OnText receives answer text as it arrives; OnThought the model's
	// thinking, where the provider shows it.
	OnText    func(string)
	OnThought func(string)
	// OnProgress is told when a step or a tool starts.
	OnProgress func(Progress)
}

// Verdict is Config.Verify's answer about a final answer. The zero value
// lets the run complete.
type Verdict struct {
	// Again, when set, goes back to the model as the next user turn.
	Again string
	// Status, when set, ends the run with it, and Err says why.
	Status string
	Err    error
}

// BudgetState is how much of a budget is left before a request.
type BudgetState struct {
	// Spent: the budget is used up; the run stops before the request.
	Spent bool
	// Last: one more request like the last would use it up, so this one
	// is the last step, without tools.
	Last bool
	// Why says which budget, for the run's error.
	Why string
}

// Resume is where a pending run stopped: the step of its held request
// and what it had used and been refused before it. That request's event
// is already recorded, so the first attempt of the step records none: its
// response follows the request in the transcript, as in any run.
type Resume struct {
	Step         int
	Usage        providers.Usage
	UsagePerStep []records.StepUsage
	// Paused, when set, is the step of a deferred run: History ends with
	// the model's calls, and the loop first decides the deferred ones
	// under its Gate. No request of it is pending.
	Paused *Paused
}

// Paused is the step a deferred run stopped at (see records.Paused).
type Paused = records.Paused

// Deferred is a call that waits for `ask resume`, as --json lists it.
type Deferred = records.Deferred

// Progress is a moment of the run worth showing on a status line.
type Progress struct {
	Step, MaxSteps int
	Tool           string // empty while waiting for the model
	Arguments      string
	// Compacting: the run is compacting its conversation to fit the
	// model's window.
	Compacting bool
}

// Result is what a run came to.
type Result struct {
	Status  string
	Answer  string
	Steps   int
	Calls   []Call
	Usage   providers.Usage
	Denials []records.Denial
	// Refused: the --safe profile refused at least one call. The status
	// says how the run ended; this says that it also tried something the
	// profile forbids, whatever the status.
	Refused bool
	// History is the whole conversation in the protocol's form, for
	// continuing it later.
	History []json.RawMessage
	// UsagePerStep is each model request's usage, in step order.
	UsagePerStep []records.StepUsage
	// Err is the fault that ended the run, for statuses error, timeout,
	// interrupted and schema_failed.
	Err error
	// Compactions are what each compaction of the history did.
	Compactions []records.Compaction
	// Deferred are the calls a deferred run waits on, and Paused its
	// step, for Resume.Paused (StatusDeferred).
	Deferred []Deferred
	Paused   *Paused
}

// Call is one tool call and what came of it.
type Call struct {
	providers.ToolCall
	Step    int    `json:"step"`
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
	Denied  bool   `json:"denied,omitempty"`
	// Deferred: the call waits for `ask resume`; it did not run.
	Deferred bool `json:"deferred,omitempty"`
}

// Run runs the loop until the model answers, a limit is reached or ctx ends.
func Run(ctx context.Context, cfg Config) *Result {
	r := &runner{cfg: cfg, res: &Result{}}
	if r.cfg.MaxSteps <= 0 {
		r.cfg.MaxSteps = DefaultMaxSteps
	}
	r.run(ctx)
	return r.res
}

type runner struct {
	cfg     Config
	res     *Result
	history []json.RawMessage
	// checked is how many messages of history a request was built from:
	// the protocol need not check them again (Request.Checked).
	checked int
	// The stuck-model guard: the last step's calls and results, how many
	// steps in a row had them, and the count of changed files after it.
	lastStep    string
	streak      int
	lastChanges int
	parseFails  int
	refused     bool
	schema      *Schema
	schemaErrs  int // final answers that did not match the schema
	// budgetLast: this step is the last the budget allows, for budgetWhy.
	budgetLast bool
	budgetWhy  string
	// recorded: the next request's event is already in the transcript
	// (Config.Resume).
	recorded bool
	comp     compactor
}

func (r *runner) run(ctx context.Context) {
	first, ok := r.begin(ctx)
	if !ok {
		return
	}
	// A prompt that cannot be rendered leaves the result no history.
	defer func() { r.res.History = r.history }()
	if first, ok = r.prepare(ctx, first); !ok {
		return
	}
	for step := first; ; step++ {
		if r.step(ctx, step) {
			return
		}
	}
}

// begin sets up the history the first request carries: the earlier
// conversation and the prompt, or a pending run's as it stopped. It
// returns the first step, and false when the run already ended.
func (r *runner) begin(ctx context.Context) (int, bool) {
	r.history = append(r.history, r.cfg.History...)
	first := 1
	if rs := r.cfg.Resume; rs != nil {
		// The history already ends with what the held request asked, or,
		// paused, with the calls of its step.
		first, r.recorded = max(rs.Step, 1), rs.Paused == nil
		r.res.Usage, r.res.UsagePerStep = rs.Usage, rs.UsagePerStep
	} else {
		user, err := r.protocol().UserMessage(r.cfg.Prompt, r.cfg.Attachments...)
		if err != nil {
			r.fail(ctx, fmt.Errorf("render prompt: %w", err))
			return 0, false
		}
		r.history = append(r.history, user)
	}
	return first, true
}

// prepare readies the compactor and the answer schema, and decides a
// paused run's deferred calls. It returns the step the loop starts at,
// and false when the run already ended.
func (r *runner) prepare(ctx context.Context, first int) (int, bool) {
	r.comp = compactor{window: r.cfg.Window, at: cmpOr(r.cfg.CompactAt, DefaultCompactAt), off: r.cfg.NoCompact,
		taskEnd: len(r.history), firstStep: first}
	if len(r.cfg.Schema) > 0 {
		var err error
		if r.schema, err = CompileSchema(r.cfg.Schema); err != nil {
			r.fail(ctx, fmt.Errorf("answer schema: %w", err))
			return 0, false
		}
	}
	if rs := r.cfg.Resume; rs != nil && rs.Paused != nil {
		r.res.Steps = first
		if r.decidePaused(ctx, first, rs.Paused) {
			return 0, false
		}
		first++
		// The held step's results answer calls in the fixed head.
		r.comp.taskEnd, r.comp.firstStep = len(r.history), first
	}
	return first, true
}

// step runs one step: a request, and what its turn asks for. It reports
// whether the run ended.
func (r *runner) step(ctx context.Context, step int) bool {
	if step > 1 && r.budget() {
		return true
	}
	r.res.Steps = step
	r.progress(Progress{Step: step, MaxSteps: r.cfg.MaxSteps})
	turn, err := r.send(ctx, step, r.request(step))
	if err != nil {
		r.fail(ctx, err)
		return true
	}
	if turn.Invalid != "" && len(turn.Calls) == 0 {
		return r.correct(ctx, step, turn.Invalid)
	}
	r.parseFails = 0
	if len(turn.Calls) == 0 {
		return r.answered(ctx)
	}
	return r.handleCalls(ctx, step, turn)
}

// request is the step's request, before it is fitted to the window.
func (r *runner) request(step int) providers.Request {
	req := providers.Request{
		System:    r.cfg.System,
		Messages:  r.history,
		Tools:     r.cfg.Tools,
		Stream:    r.cfg.Stream,
		MaxTokens: r.cfg.MaxTokens,
		Schema:    r.cfg.Schema,
		Checked:   r.checked,
	}
	// The last step the limit allows withholds the tools and says so,
	// so that a run stopped by its limit still ends with an answer.
	if (step == r.cfg.MaxSteps || r.budgetLast) && len(r.cfg.Tools) > 0 {
		req.NoToolCalls = true
		// In the system prompt rather than as a message after the
		// conversation: Gemini refuses two user turns in a row, and
		// a note folded into a turn of tool results reads as one.
		// It costs the cache of this one request.
		req.System = strings.TrimLeft(req.System+"\n\n", "\n") + LastStepNote
	}
	req.ContextWindow = r.comp.window
	return req
}

// send fits req to the window and sends it, compacting and sending once
// more when the provider says it overflowed, then takes the turn into
// the history. The error is the one the run fails with.
func (r *runner) send(ctx context.Context, step int, req providers.Request) (*providers.Turn, error) {
	req, err := r.fit(ctx, step, req)
	if err != nil {
		return nil, err
	}
	turn, err := r.call(ctx, req, r.hooks(step))
	if err != nil {
		retry, ok, cerr := r.overflow(ctx, step, req, err)
		switch {
		case cerr != nil:
			err = cerr
		case ok:
			req = retry
			turn, err = r.call(ctx, req, r.hooks(step))
		}
	}
	if err != nil {
		return nil, r.tooLong(err)
	}
	r.take(step, req, turn)
	return turn, nil
}

// take records the turn the step's request got and adds it to the history.
func (r *runner) take(step int, req providers.Request, turn *providers.Turn) {
	r.comp.learn(turn.Usage)
	r.checked = len(req.Messages)
	r.comp.spans = append(r.comp.spans, span{step: step, start: len(r.history)})
	r.res.Usage = r.res.Usage.Add(turn.Usage)
	r.res.UsagePerStep = append(r.res.UsagePerStep, records.StepUsage{Step: step, Usage: turn.Usage})
	usage := turn.Usage
	r.emit(records.Event{Type: records.TypeAssistant, Step: step, Text: turn.Text, Reasoning: turn.Reasoning, ToolCalls: turn.Calls, Usage: &usage})
	r.history = append(r.history, turn.Messages...)
	r.res.Answer = turn.Text
}

// correct answers a turn the protocol could not parse with its
// correction, unless the run has failed to parse too often or has no
// step left. It reports whether the run ended.
func (r *runner) correct(ctx context.Context, step int, invalid string) bool {
	r.parseFails++
	if r.parseFails >= parseFailLimit {
		r.finish(StatusParseFailures)
		return true
	}
	if step >= r.cfg.MaxSteps {
		// A correction is one more request, which the limit forbids.
		r.finish(StatusMaxSteps)
		return true
	}
	msg, err := r.protocol().UserMessage(invalid)
	if err != nil {
		r.fail(ctx, err)
		return true
	}
	r.history = append(r.history, msg)
	return false
}

// handleCalls runs the turn's tool calls and answers them, unless the
// budget or the step limit stops the run first: then each call is
// answered as not run. It reports whether the run ended.
func (r *runner) handleCalls(ctx context.Context, step int, turn *providers.Turn) bool {
	if r.budgetLast {
		r.res.Status, r.res.Err = StatusBudget, errors.New(r.budgetWhy)
		r.closeCalls(turn.Calls, "not run: the run stopped at its budget")
		return true
	}
	if step >= r.cfg.MaxSteps {
		r.finish(StatusMaxSteps)
		r.closeCalls(turn.Calls, "not run: the run stopped at its step limit")
		return true
	}
	outcomes := r.runCalls(ctx, step, turn.Calls)
	return r.answerCalls(ctx, turn.Calls, outcomes, turn.Terminate)
}

// answerCalls feeds the results of a step's calls back, or pauses the run
// when one was deferred: then no request follows, and the history ends
// with the calls, for Resume.Paused. It reports whether the run ended.
func (r *runner) answerCalls(ctx context.Context, calls []providers.ToolCall, outcomes []Outcome, terminate bool) bool {
	results := make([]providers.ToolResult, len(outcomes))
	var deferred []int
	for i, o := range outcomes {
		results[i] = o.Result
		if o.Deferred {
			deferred = append(deferred, i)
		}
	}
	if ctx.Err() != nil {
		if msgs, err := r.protocol().FormatToolResults(results); err == nil {
			r.history = append(r.history, msgs...) // every call answered, for continuing
		}
		r.fail(ctx, context.Cause(ctx))
		return true
	}
	if len(deferred) > 0 {
		r.res.Status = StatusDeferred
		r.res.Paused = &Paused{Calls: calls, Results: results, Deferred: deferred}
		return true
	}
	msgs, err := r.protocol().FormatToolResults(results)
	if err != nil {
		r.fail(ctx, fmt.Errorf("format tool results: %w", err))
		return true
	}
	if n := len(r.comp.spans); n > 0 {
		// The step's results, which compaction may prune later.
		sp := &r.comp.spans[n-1]
		sp.resultsAt, sp.results = len(r.history), results
		r.history = append(r.history, msgs...)
		sp.resultsEnd = len(r.history)
	} else {
		r.history = append(r.history, msgs...)
	}
	if terminate {
		if r.res.Answer == "" && len(results) > 0 {
			r.res.Answer = results[len(results)-1].Content
		}
		if r.answered(ctx) {
			return true
		}
	}
	if r.stuck(calls, results) {
		r.finish(StatusRepeatedCall)
		return true
	}
	return false
}

// decidePaused carries on a deferred run: the calls that waited are put
// to the gate again (this run's, whatever the earlier one said) and run or
// refused; the others keep the results they had. It reports whether the
// run ended, paused again or otherwise.
func (r *runner) decidePaused(ctx context.Context, step int, p *Paused) bool {
	waiting := make([]providers.ToolCall, len(p.Deferred))
	for k, i := range p.Deferred {
		waiting[k] = p.Calls[i]
	}
	decided := r.runCalls(ctx, step, waiting)
	outcomes := make([]Outcome, len(p.Calls))
	for i, res := range p.Results {
		outcomes[i] = Outcome{Result: res}
	}
	for k, i := range p.Deferred {
		outcomes[i] = decided[k]
	}
	return r.answerCalls(ctx, p.Calls, outcomes, false)
}

// call asks the model for one step. A panic in it (a parser tripped by the
// reply, a command model's reader) ends the run as an error wrapping
// providers.ErrMalformed, so that the caller still finishes its transcript.
func (r *runner) call(ctx context.Context, req providers.Request, h providers.Hooks) (turn *providers.Turn, err error) {
	defer providers.RecoverMalformed("the "+r.protocol().Name()+" reply", &err)
	return r.cfg.Model.Call(ctx, req, h)
}

// stuck reports whether this step is the repeatLimit-th in a row to make
// the same calls and get the same results with no file changed since the
// one before: a model stuck in a loop. Any other call, or any change,
// starts the count again.
func (r *runner) stuck(calls []providers.ToolCall, results []providers.ToolResult) bool {
	var fp strings.Builder
	for i, c := range calls {
		// Lengths first, so that no content can pass for another split.
		args, res := compactJSON(c.Arguments), results[i].Content
		fmt.Fprintf(&fp, "%d:%s%d:%s%t%d:%s", len(c.Name), c.Name, len(args), args, results[i].IsError, len(res), res)
	}
	changes := 0
	if r.cfg.Changes != nil {
		changes = r.cfg.Changes()
	}
	if r.streak > 0 && fp.String() == r.lastStep && changes == r.lastChanges {
		r.streak++
	} else {
		r.streak = 1
	}
	r.lastStep, r.lastChanges = fp.String(), changes
	return r.streak >= repeatLimit
}

func (r *runner) runCalls(ctx context.Context, step int, calls []providers.ToolCall) []Outcome {
	grace := r.cfg.ToolGrace
	if grace <= 0 {
		grace = DefaultToolGrace
	}
	outcomes := runCalls(ctx, r.cfg.Gate, r.cfg.Toolbox, calls, CallHooks{
		OnUnreadable: func(c providers.ToolCall) {
			r.emit(records.Event{Type: records.TypeToolFinished, Step: step, ID: c.ID, Name: c.Name, Content: c.Unreadable, IsError: true})
		},
		OnDenied: func(c providers.ToolCall, v policy.Verdict) {
			r.refused = r.refused || v.Refusal
			r.res.Refused = r.refused
			r.res.Denials = append(r.res.Denials, records.Denial{ID: c.ID, Name: c.Name, Reason: v.Reason})
			r.emit(records.Event{Type: records.TypeToolDenied, Step: step, ID: c.ID, Name: c.Name, Arguments: c.Arguments, Reason: v.Reason})
		},
		OnDeferred: func(c providers.ToolCall, v policy.Verdict) {
			r.res.Deferred = append(r.res.Deferred, Deferred{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Reason: v.Reason})
			r.emit(records.Event{Type: records.TypeToolDeferred, Step: step, ID: c.ID, Name: c.Name, Arguments: c.Arguments, Reason: v.Reason})
		},
		OnStart: func(c providers.ToolCall) {
			r.progress(Progress{Step: step, MaxSteps: r.cfg.MaxSteps, Tool: c.Name, Arguments: c.Arguments})
			r.emit(records.Event{Type: records.TypeToolStarted, Step: step, ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		},
		OnFinish: func(c providers.ToolCall, res providers.ToolResult, took time.Duration) {
			r.emit(records.Event{Type: records.TypeToolFinished, Step: step, ID: c.ID, Name: c.Name,
				Content: res.Content, IsError: res.IsError, DurationMS: took.Milliseconds()})
		},
	}, grace)
	for i, c := range calls {
		res := outcomes[i].Result
		r.res.Calls = append(r.res.Calls, Call{ToolCall: c, Step: step, Content: res.Content,
			IsError: res.IsError, Denied: outcomes[i].Denied, Deferred: outcomes[i].Deferred})
	}
	return outcomes
}

func (r *runner) hooks(step int) providers.Hooks {
	return providers.Hooks{
		OnDelta:   r.cfg.OnText,
		OnThought: r.cfg.OnThought,
		OnRequest: func(url string, h http.Header, body []byte) {
			r.comp.sent = len(body)
			if r.recorded {
				r.recorded = false // the held request, recorded before
				return
			}
			r.emit(records.Event{Type: records.TypeRequest, Step: step, URL: url, Headers: records.Headers(h), Body: records.BodyJSON(body)})
		},
		OnResponse: func(status int, h http.Header, body []byte) {
			r.emit(records.Event{Type: records.TypeResponse, Step: step, HTTPStatus: status, Headers: records.Headers(h), Body: records.BodyJSON(body)})
		},
		OnRetry: func(attempt int, delay time.Duration, err error) {
			r.emit(records.Event{Type: records.TypeRetry, Step: step, Attempt: attempt, DelayMS: delay.Milliseconds(), Error: err.Error()})
		},
	}
}

// answered handles a final answer: without a schema, or when the answer
// matches it, the run completes; otherwise the errors go back to the model
// (answered returns false and the loop goes on) until schemaRetries is
// used up and the run stops with StatusSchemaFailed.
func (r *runner) answered(ctx context.Context) bool {
	if r.schema == nil {
		return r.verify(ctx)
	}
	answer, err := r.schema.Check(r.res.Answer)
	if err == nil {
		r.res.Answer = answer
		return r.verify(ctx)
	}
	r.schemaErrs++
	switch {
	case r.schemaErrs > schemaRetries:
		r.res.Status = StatusSchemaFailed
		r.res.Err = fmt.Errorf("the answer did not match the schema after %d attempts: %w", r.schemaErrs, err)
		return true
	case r.res.Steps >= r.cfg.MaxSteps:
		// A retry is one more request, which the step limit forbids.
		r.res.Status = StatusSchemaFailed
		r.res.Err = fmt.Errorf("the answer did not match the schema, and the step limit (%d) leaves no request to correct it: %w", r.cfg.MaxSteps, err)
		return true
	}
	msg, uerr := r.protocol().UserMessage(schemaRetryText(err))
	if uerr != nil {
		r.fail(ctx, uerr)
		return true
	}
	r.history = append(r.history, msg)
	return false
}

// verify puts a final answer to Config.Verify: the run completes, ends as
// it says, or goes on with its words as the next user turn (false). The
// last step a budget allows ends the run StatusBudget, answer and all.
func (r *runner) verify(ctx context.Context) bool {
	if r.budgetLast {
		r.res.Status, r.res.Err = StatusBudget, errors.New(r.budgetWhy)
		return true
	}
	if r.cfg.Verify == nil {
		r.finish(StatusCompleted)
		return true
	}
	v := r.cfg.Verify(ctx, r.res.Answer)
	switch {
	case v.Status != "":
		r.res.Status, r.res.Err = v.Status, v.Err
		return true
	case v.Again == "":
		r.finish(StatusCompleted)
		return true
	case r.res.Steps >= r.cfg.MaxSteps:
		// Going back is one more request, which the step limit forbids;
		// the answer stands, and Err says why it was not accepted.
		r.res.Status = StatusMaxSteps
		r.res.Err = fmt.Errorf("its last answer was sent back (%s), and the step limit leaves no request to answer again", termtext.Shorten(v.Again, 200))
		return true
	}
	msg, err := r.protocol().UserMessage(v.Again)
	if err != nil {
		r.fail(ctx, err)
		return true
	}
	r.history = append(r.history, msg)
	return false
}

// budget asks Config.Budget before a request: true when the budget is
// spent and the run has ended StatusBudget.
func (r *runner) budget() bool {
	if r.cfg.Budget == nil {
		return false
	}
	var last providers.Usage
	if n := len(r.res.UsagePerStep); n > 0 {
		last = r.res.UsagePerStep[n-1].Usage
	}
	b := r.cfg.Budget(r.res.Usage, last)
	if b.Spent {
		r.res.Status, r.res.Err = StatusBudget, errors.New(b.Why)
		return true
	}
	r.budgetLast, r.budgetWhy = b.Last, b.Why
	return false
}

// closeCalls answers calls that will not run, so that the history a later
// run continues from has a result for every call, as providers require.
func (r *runner) closeCalls(calls []providers.ToolCall, reason string) {
	results := make([]providers.ToolResult, len(calls))
	for i, c := range calls {
		results[i] = providers.ToolResult{ID: c.ID, Name: c.Name, Content: reason, IsError: true}
	}
	if msgs, err := r.protocol().FormatToolResults(results); err == nil {
		r.history = append(r.history, msgs...)
	}
}

func (r *runner) finish(status string) {
	if status == StatusCompleted && r.refused {
		status = StatusDenied
	}
	r.res.Status = status
}

// fail ends the run on an error, telling a timeout and an interruption
// apart from other faults by the context's cause.
func (r *runner) fail(ctx context.Context, err error) {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, ErrPending):
		// Not a fault: the run is carried on later.
		r.res.Status = StatusPending
		return
	case errors.Is(cause, ErrHookStopped):
		r.res.Status, r.res.Err = StatusHookStopped, cause
	case errors.Is(cause, ErrTimeout) || errors.Is(err, ErrTimeout):
		r.res.Status, r.res.Err = StatusTimeout, ErrTimeout
	case errors.Is(cause, ErrInterrupted):
		// The cause may say more (which signal): keep it.
		r.res.Status, r.res.Err = StatusInterrupted, cause
	case errors.Is(err, ErrInterrupted):
		r.res.Status, r.res.Err = StatusInterrupted, ErrInterrupted
	case cause != nil:
		r.res.Status, r.res.Err = StatusInterrupted, cause
	default:
		r.res.Status, r.res.Err = StatusError, err
	}
	r.emit(records.Event{Type: records.TypeError, Step: r.res.Steps, Error: r.res.Err.Error()})
}

// protocol is the model's protocol now; it may change between steps.
func (r *runner) protocol() providers.Protocol { return r.cfg.Model.CurrentProtocol() }

func (r *runner) emit(ev records.Event) { r.cfg.Recorder.Emit(ev) }

func (r *runner) progress(p Progress) {
	if r.cfg.OnProgress != nil {
		r.cfg.OnProgress(p)
	}
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// compactJSON normalises argument text so that the same call with other
// spacing counts as a repeat; invalid JSON is used as it is.
func compactJSON(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return s
	}
	return string(b)
}
