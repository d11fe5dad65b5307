// Package trace turns the events of a run into OpenTelemetry spans in the
// GenAI semantic conventions and sends them over OTLP/HTTP (DESIGN §6,
// Traces): an invoke_agent span for the run, a chat span per model
// request, an execute_tool span per tool call, spans for hooks and checks,
// and, for `ask batch`, a span for the batch and one per task (Batch).
//
// It is off unless the OTEL_* variables ask for it (Enabled), and costs
// nothing then: nothing is set up, and the package has no init work. It
// reads the environment through the run's getenv only.
//
// Content (prompts, answers, tool arguments and results, hook and check
// output) is recorded only with
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true; every string
// passes through the run's redactor, so its keys never are.
package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

// Options are what a trace needs besides the events.
type Options struct {
	// Getenv reads the OTEL_* variables and TRACEPARENT/TRACESTATE.
	Getenv func(string) string
	// Version is ask's, the resource's service.version.
	Version string
	// Secrets never appear in a span (the run's keys, a password in its
	// base URL).
	Secrets []string
	// ProviderName is gen_ai.provider.name: the run's provider as its
	// catalog row names it in traces (catalog.Provider.TracedName); ""
	// for the name run.started records.
	ProviderName string
}

// Run is the trace of one run. A nil *Run does nothing, which is what
// StartRun returns when the environment does not ask for traces.
type Run struct {
	cfg     config
	exp     *exporter
	red     *providers.Redactor
	sampled bool

	mu    sync.Mutex
	root  *span
	chats map[int]*span    // by step, while the request is under way
	tools map[string]*span // by call id, while the call runs
	// providerName is Options.ProviderName, else run.started's provider;
	// provider and model are run.started's, for the chat spans.
	providerName    string
	provider, model string
	ended           bool
}

// StartRun prepares the trace of a run whose span will be a child of the
// span ctx carries (a batch task's), else of TRACEPARENT. It returns nil
// when the environment asks for no traces, and an error (with nil) when
// it asks for them wrongly: the run goes on without.
func StartRun(ctx context.Context, o Options) (*Run, error) {
	if !Enabled(o.Getenv) {
		return nil, nil
	}
	cfg, err := readConfig(o.Getenv, o.Version)
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	parent, remote := parentOf(ctx, o.Getenv)
	r := &Run{cfg: cfg, exp: exporterFor(cfg), providerName: o.ProviderName, red: providers.NewRedactor(o.Secrets...),
		chats: map[int]*span{}, tools: map[string]*span{}}
	r.root = newSpan(cfg, parent, remote, "invoke_agent ask", kindInternal, time.Now())
	r.sampled = r.root.ctx.IsSampled()
	return r, nil
}

// parentOf is the span a run's span belongs under: the one ctx carries,
// else the W3C traceparent of the environment.
func parentOf(ctx context.Context, getenv func(string) string) (oteltrace.SpanContext, bool) {
	if sc := oteltrace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc, sc.IsRemote()
	}
	carrier := propagation.MapCarrier{}
	if tp := strings.TrimSpace(getenv("TRACEPARENT")); tp != "" {
		carrier["traceparent"] = tp
		if ts := strings.TrimSpace(getenv("TRACESTATE")); ts != "" {
			carrier["tracestate"] = ts
		}
	}
	sc := oteltrace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
	return sc, sc.IsValid()
}

// newSpan starts a span under parent (a new trace when parent is not
// valid), sampled as cfg says.
func newSpan(cfg config, parent oteltrace.SpanContext, remote bool, name string, kind int, start time.Time) *span {
	tid := parent.TraceID()
	if !parent.IsValid() {
		tid = newTraceID()
	}
	var flags oteltrace.TraceFlags
	if cfg.sampled(parent, tid) {
		flags = oteltrace.FlagsSampled
	}
	sc := oteltrace.NewSpanContext(oteltrace.SpanContextConfig{TraceID: tid, SpanID: newSpanID(), TraceFlags: flags, TraceState: parent.TraceState()})
	return &span{ctx: sc, parent: parent.SpanID(), remoteParent: remote, name: name, kind: kind, start: start}
}

// child starts a span under s.
func (s *span) child(cfg config, name string, kind int, start time.Time) *span {
	return newSpan(cfg, s.ctx, false, name, kind, start)
}

// end ends s at t and queues it, unless the trace is not sampled.
func (r *Run) end(s *span, t time.Time) {
	if s == nil || !s.end.IsZero() {
		return
	}
	s.end = t
	if s.end.Before(s.start) {
		s.end = s.start
	}
	if s.ctx.IsSampled() {
		r.exp.add(s)
	}
}

// Context returns ctx carrying the run's span, for work done on its
// behalf outside the events.
func (r *Run) Context(ctx context.Context) context.Context {
	if r == nil {
		return ctx
	}
	return oteltrace.ContextWithSpanContext(ctx, r.root.ctx)
}

// CallContext returns ctx carrying the span of tool call id (the run's
// span when there is none), so that what the tool sends on (an MCP
// request's _meta) continues the trace.
func (r *Run) CallContext(ctx context.Context, id string) context.Context {
	if r == nil {
		return ctx
	}
	r.mu.Lock()
	s := r.tools[id]
	r.mu.Unlock()
	if s == nil {
		s = r.root
	}
	return oteltrace.ContextWithSpanContext(ctx, s.ctx)
}

// TraceID is the run's trace, for tests and for a note under -v.
func (r *Run) TraceID() string {
	if r == nil {
		return ""
	}
	return r.root.ctx.TraceID().String()
}

// Observe turns one event of the run into spans. It is a records.Recorder
// observer: events come one at a time, in order. Types it does not know
// are ignored, so that new events need no change here to pass through.
func (r *Run) Observe(ev records.Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	switch ev.Type {
	case records.TypeRunStarted:
		r.started(ev)
	case records.TypeRequest:
		r.request(ev)
	case records.TypeResponse:
		r.response(ev)
	case records.TypeRetry:
		if s := r.chats[ev.Step]; s != nil {
			s.events = append(s.events, spanEvent{name: "retry", time: ev.Time, attrs: []attribute.KeyValue{
				attribute.Int("ask.retry.attempt", ev.Attempt), attribute.Int64("ask.retry.delay_ms", ev.DelayMS),
				r.str("ask.retry.error", ev.Error)}})
		}
	case records.TypeAssistant:
		r.assistant(ev)
	case records.TypeToolStarted:
		r.toolStarted(ev)
	case records.TypeToolFinished:
		r.toolFinished(ev)
	case records.TypeToolDenied:
		s := r.toolSpan(ev, ev.Time)
		s.fail("denied", "refused by policy")
		if r.cfg.capture {
			s.set(r.str(keyDenyReason, ev.Reason))
		}
		r.end(s, ev.Time)
	case records.TypeFileChanged:
		if ev.Change != nil {
			r.root.events = append(r.root.events, spanEvent{name: "file.changed", time: ev.Time, attrs: []attribute.KeyValue{
				r.str("ask.file.path", ev.Path), attribute.String("ask.file.action", ev.Action), r.str(keyToolName, ev.Tool)}})
		}
	case records.TypeError:
		if s := r.chats[ev.Step]; s != nil {
			s.fail("error", r.redact(firstLine(ev.Error)))
			r.end(s, ev.Time)
			delete(r.chats, ev.Step)
		}
		r.root.events = append(r.root.events, spanEvent{name: "exception", time: ev.Time,
			attrs: []attribute.KeyValue{r.str("exception.message", ev.Error)}})
	case records.TypeHook:
		r.hook(ev)
	case records.TypeCheckFinished:
		r.check(ev)
	case records.TypeNetwork:
		// A connection through the sandbox's proxy: an event of the run.
		a := []attribute.KeyValue{r.str(keyServerAddress, ev.Host), attribute.Int(keyServerPort, ev.Port), attribute.Int(keyStep, ev.Step)}
		if ev.Allowed != nil {
			a = append(a, attribute.Bool("ask.network.allowed", *ev.Allowed))
		}
		r.root.events = append(r.root.events, spanEvent{name: "network", time: ev.Time, attrs: a})
	case records.TypeRunFinished:
		r.finished(ev)
	}
}

func (r *Run) started(ev records.Event) {
	s := r.root
	s.start = ev.Time
	r.provider, r.model = ev.Provider, ev.Model
	if r.providerName == "" {
		r.providerName = ev.Provider
	}
	s.set(attribute.String(keyOperationName, opInvokeAgent), attribute.String(keyAgentName, "ask"),
		r.str(keyConversationID, ev.ID), r.str(keyProviderName, r.providerName), r.str(keyRequestModel, ev.Model))
	if ev.Mode != "" {
		s.set(attribute.String("ask.mode", ev.Mode))
	}
	if set := ev.Settings; set != nil {
		if set.MaxTokens > 0 {
			s.set(attribute.Int(keyRequestMaxTokens, set.MaxTokens))
		}
		if set.Temperature != nil {
			s.set(attribute.Float64(keyRequestTemperature, *set.Temperature))
		}
		if r.cfg.capture {
			s.set(r.str(keyInputMessages, textMessages("user", set.Prompt, "")))
			if set.System != "" {
				parts, _ := json.Marshal([]part{{Type: "text", Content: set.System}})
				s.set(r.str(keySystemInstructions, string(parts)))
			}
		}
	}
}

func (r *Run) request(ev records.Event) {
	if r.chats[ev.Step] != nil {
		return // a retry of the step's request: the same chat span
	}
	s := r.root.child(r.cfg, strings.TrimSpace(opChat+" "+r.model), kindClient, ev.Time)
	s.set(attribute.String(keyOperationName, opChat), r.str(keyProviderName, r.providerName),
		r.str(keyRequestModel, r.model), r.root.attr(keyConversationID), attribute.Int(keyStep, ev.Step))
	if u, err := url.Parse(ev.URL); err == nil && u.Host != "" {
		// The host alone: a query may carry a key.
		s.set(attribute.String(keyServerAddress, u.Hostname()))
		if p, err := strconv.Atoi(u.Port()); err == nil {
			s.set(attribute.Int(keyServerPort, p))
		}
	}
	r.chats[ev.Step] = s
}

func (r *Run) response(ev records.Event) {
	s := r.chats[ev.Step]
	if s == nil {
		return
	}
	s.set(attribute.Int(keyHTTPStatus, ev.HTTPStatus))
	if ev.HTTPStatus >= 400 {
		s.set(attribute.String(keyErrorType, strconv.Itoa(ev.HTTPStatus)))
		return
	}
	model, id, reasons := readResponse(records.BodyBytes(ev.Body))
	if model != "" {
		s.set(r.str(keyResponseModel, model))
	}
	if id != "" {
		s.set(r.str(keyResponseID, id))
	}
	if len(reasons) > 0 {
		s.set(attribute.StringSlice(keyResponseFinish, reasons))
	}
}

func (r *Run) assistant(ev records.Event) {
	s := r.chats[ev.Step]
	if s == nil {
		return
	}
	delete(r.chats, ev.Step)
	if s.attr(keyErrorType).Value.AsString() != "" && s.status == 0 {
		// An error status before a retry that then answered.
		s.attrs = without(s.attrs, keyErrorType)
	}
	if u := ev.Usage; u != nil {
		s.set(usage(*u)...)
	}
	if r.cfg.capture {
		s.set(r.str(keyOutputMessages, outputMessages(ev.Text, ev.ToolCalls)))
	}
	r.end(s, ev.Time)
}

func (r *Run) toolStarted(ev records.Event) {
	s := r.toolSpan(ev, ev.Time)
	if r.cfg.capture {
		s.set(r.str(keyToolCallArguments, ev.Arguments))
	}
	r.tools[ev.ID] = s
}

// toolSpan starts the execute_tool span of a call.
func (r *Run) toolSpan(ev records.Event, start time.Time) *span {
	s := r.root.child(r.cfg, opExecuteTool+" "+ev.Name, kindInternal, start)
	s.set(attribute.String(keyOperationName, opExecuteTool), r.str(keyToolName, ev.Name),
		r.str(keyToolCallID, ev.ID), attribute.String(keyToolType, "function"), attribute.Int(keyStep, ev.Step))
	return s
}

func (r *Run) toolFinished(ev records.Event) {
	s := r.tools[ev.ID]
	delete(r.tools, ev.ID)
	if s == nil {
		// A call answered without running (its arguments unreadable).
		s = r.toolSpan(ev, ev.Time.Add(-time.Duration(ev.DurationMS)*time.Millisecond))
	}
	if ev.IsError {
		s.fail("tool_error", "the tool reported an error")
	}
	if r.cfg.capture {
		s.set(r.str(keyToolCallResult, ev.Content))
	}
	r.end(s, ev.Time)
}

// hook records one hook's decision, under its tool call's span when the
// call is running.
func (r *Run) hook(ev records.Event) {
	parent := r.root
	if t := r.tools[ev.ID]; t != nil && ev.ID != "" {
		parent = t
	}
	s := parent.child(r.cfg, strings.TrimSpace("hook "+ev.HookEvent), kindInternal, ev.Time.Add(-time.Duration(ev.DurationMS)*time.Millisecond))
	s.set(r.str(keyHookEvent, ev.HookEvent), r.str(keyHookCommand, ev.Command), r.str(keyHookDecision, ev.Decision))
	if ev.Name != "" {
		s.set(r.str(keyToolName, ev.Name))
	}
	if ev.ID != "" {
		s.set(r.str(keyToolCallID, ev.ID))
	}
	if ev.Decision == "error" {
		s.fail("hook_error", "the hook failed")
	}
	if r.cfg.capture && ev.Reason != "" {
		s.set(r.str(keyHookReason, ev.Reason))
	}
	r.end(s, ev.Time)
}

// check records one round of --until's check.
func (r *Run) check(ev records.Event) {
	s := r.root.child(r.cfg, "check", kindInternal, ev.Time.Add(-time.Duration(ev.DurationMS)*time.Millisecond))
	s.set(r.str(keyCheckCommand, ev.Command), attribute.Int(keyCheckRound, ev.Round))
	if ev.Passed != nil {
		s.set(attribute.Bool(keyCheckPassed, *ev.Passed))
		if !*ev.Passed {
			s.fail("check_failed", "the check did not pass")
		}
	}
	if ev.CheckExit != nil {
		s.set(attribute.Int(keyCheckExit, *ev.CheckExit))
	}
	if r.cfg.capture && ev.Content != "" {
		s.set(r.str(keyCheckOutput, ev.Content))
	}
	r.end(s, ev.Time)
}

func (r *Run) finished(ev records.Event) {
	// Whatever is still open ends with the run (a call abandoned at a
	// timeout, a request cut by Ctrl-C).
	for step, s := range r.chats {
		s.fail("interrupted", "the run ended first")
		r.end(s, ev.Time)
		delete(r.chats, step)
	}
	for id, s := range r.tools {
		s.fail("interrupted", "the run ended first")
		r.end(s, ev.Time)
		delete(r.tools, id)
	}
	s := r.root
	s.set(attribute.String(keyRunStatus, ev.Status), attribute.Int(keyRunExitCode, ev.ExitCode), attribute.Int(keyRunSteps, ev.Steps))
	if ev.Usage != nil {
		s.set(usage(*ev.Usage)...)
	}
	if ev.Cost != nil {
		s.set(attribute.Float64(keyCost, *ev.Cost))
	}
	if ev.ExitCode != 0 {
		s.fail(ev.Status, "the run ended "+ev.Status)
	}
	if r.cfg.capture && ev.Answer != nil {
		s.set(r.str(keyOutputMessages, textMessages("assistant", *ev.Answer, "stop")))
	}
	r.end(s, ev.Time)
	r.ended = true
}

// str is a string attribute as a span may carry it: redacted, valid UTF-8
// (OTLP strings must be) and within the value length limit.
func (r *Run) str(key, v string) attribute.KeyValue {
	return attribute.String(key, clip(r.redact(v), r.cfg.valueLimit))
}

func (r *Run) redact(v string) string {
	return strings.ToValidUTF8(string(r.red.Redact([]byte(v))), "\uFFFD")
}

// clip cuts v to at most limit bytes, on a rune boundary.
func clip(v string, limit int) string {
	if limit <= 0 || len(v) <= limit {
		return v
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut]
}

func (s *span) attr(key string) attribute.KeyValue {
	for _, kv := range s.attrs {
		if string(kv.Key) == key {
			return kv
		}
	}
	return attribute.String(key, "")
}

func without(kvs []attribute.KeyValue, key string) []attribute.KeyValue {
	out := kvs[:0]
	for _, kv := range kvs {
		if string(kv.Key) != key {
			out = append(out, kv)
		}
	}
	return out
}

func usage(u providers.Usage) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.Int(keyInputTokens, u.InputTokens), attribute.Int(keyOutputTokens, u.OutputTokens),
		attribute.Int(keyCacheReadTokens, u.CacheReadTokens), attribute.Int(keyCacheCreationTokens, u.CacheWriteTokens),
	}
}

// part and message are the JSON shapes of gen_ai.input.messages and
// gen_ai.output.messages.
type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

func textMessages(role, text, finish string) string {
	b, _ := json.Marshal([]message{{Role: role, Parts: []part{{Type: "text", Content: text}}, FinishReason: finish}})
	return string(b)
}

func outputMessages(text string, calls []providers.ToolCall) string {
	m := message{Role: "assistant", Parts: []part{}}
	if text != "" {
		m.Parts = append(m.Parts, part{Type: "text", Content: text})
	}
	for _, c := range calls {
		p := part{Type: "tool_call", ID: c.ID, Name: c.Name}
		if json.Valid([]byte(c.Arguments)) {
			p.Arguments = json.RawMessage(c.Arguments)
		} else {
			p.Arguments, _ = json.Marshal(c.Arguments)
		}
		m.Parts = append(m.Parts, p)
	}
	b, _ := json.Marshal([]message{m})
	return string(b)
}

// readResponse finds the model, the response id and the finish reasons in
// a provider's reply, a JSON document or a stream of them (SSE data lines,
// NDJSON), whatever the protocol: each spells them its own way.
func readResponse(body []byte) (model, id string, reasons []string) {
	seen := map[string]bool{}
	read := func(doc string) {
		if !gjson.Valid(doc) {
			return
		}
		for _, p := range []string{"model", "modelVersion", "message.model", "response.model"} {
			if v := gjson.Get(doc, p).String(); v != "" && model == "" {
				model = v
			}
		}
		for _, p := range []string{"id", "responseId", "message.id", "response.id"} {
			if v := gjson.Get(doc, p).String(); v != "" && id == "" {
				id = v
			}
		}
		for _, p := range []string{"choices.#.finish_reason", "candidates.#.finishReason", "stop_reason", "delta.stop_reason", "done_reason"} {
			v := gjson.Get(doc, p)
			vals := []gjson.Result{v}
			if v.IsArray() {
				vals = v.Array()
			}
			for _, x := range vals {
				if s := x.String(); s != "" && x.Type == gjson.String && !seen[s] {
					seen[s] = true
					reasons = append(reasons, s)
				}
			}
		}
	}
	t := strings.TrimSpace(string(body))
	if strings.HasPrefix(t, "{") && gjson.Valid(t) {
		read(t)
		return model, id, reasons
	}
	for _, line := range strings.Split(t, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "data:"))
		if strings.HasPrefix(line, "{") {
			read(line)
		}
	}
	return model, id, reasons
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
