package trace_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/trace"
	"github.com/ask-cli/ask/internal/trace/tracetest"
)

const (
	secret      = "fake-test-SECRET-0123456789"
	prompt      = "what does notes.txt say? PROMPT-TEXT"
	parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpan  = "00f067aa0ba902b7"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// events is a two-step run with one tool call, as the loop emits it; the
// key shows up where a careless provider could echo it.
func events(start time.Time) []records.Event {
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	body := func(s string) json.RawMessage { return records.BodyJSON([]byte(s)) }
	return []records.Event{
		{Type: records.TypeRunStarted, Time: at(0), ID: "20261127-run1", Provider: "openai", Model: "gpt-test", Mode: "agent",
			Settings: &records.Settings{Prompt: prompt + " " + secret, System: "be brief"}},
		{Type: records.TypeRequest, Time: at(1), Step: 1, URL: "https://api.example.com:8443/v1/chat/completions?key=" + secret},
		{Type: records.TypeResponse, Time: at(50), Step: 1, HTTPStatus: 200,
			Body: body(`{"id":"resp-1","model":"gpt-test-2026","choices":[{"finish_reason":"tool_calls"}]}`)},
		{Type: records.TypeAssistant, Time: at(51), Step: 1, ToolCalls: []providers.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"notes.txt"}`}},
			Usage: &providers.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 64, CacheWriteTokens: 8}},
		{Type: records.TypeToolStarted, Time: at(52), Step: 1, ID: "c1", Name: "read_file", Arguments: `{"path":"notes.txt"}`},
		{Type: records.TypeToolFinished, Time: at(60), Step: 1, ID: "c1", Name: "read_file", Content: "TOOL-RESULT hello " + secret, DurationMS: 8},
		{Type: records.TypeRequest, Time: at(61), Step: 2, URL: "https://api.example.com:8443/v1/chat/completions"},
		{Type: records.TypeRetry, Time: at(70), Step: 2, Attempt: 1, DelayMS: 10, Error: "429"},
		{Type: records.TypeResponse, Time: at(90), Step: 2, HTTPStatus: 200,
			Body: body("data: {\"id\":\"resp-2\",\"model\":\"gpt-test-2026\",\"choices\":[{\"delta\":{}}]}\n\ndata: {\"choices\":[{\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n")},
		{Type: records.TypeAssistant, Time: at(91), Step: 2, Text: "ANSWER-TEXT hello", Usage: &providers.Usage{InputTokens: 150, OutputTokens: 5}},
		{Type: "some.future.event", Time: at(92), Name: "ignored"},
		{Type: records.TypeRunFinished, Time: at(93), ID: "20261127-run1", Status: "completed", Steps: 2, ToolCount: 1,
			Answer: ptr("ANSWER-TEXT hello"), Usage: &providers.Usage{InputTokens: 250, OutputTokens: 25}},
	}
}

func ptr[T any](v T) *T { return &v }

// runTrace feeds evs to a run's trace under vars and returns what the
// receiver got once flushed.
func runTrace(t *testing.T, rcv *tracetest.Receiver, vars map[string]string, evs []records.Event) []tracetest.Span {
	t.Helper()
	tr, err := trace.StartRun(context.Background(), trace.Options{Getenv: env(vars), Version: "v9.9.9", Secrets: []string{secret}})
	if err != nil || tr == nil {
		t.Fatalf("StartRun: %v, %v", tr, err)
	}
	for _, ev := range evs {
		tr.Observe(ev)
	}
	flush(t, tr)
	if errs := rcv.Errors(); len(errs) > 0 {
		t.Fatalf("the receiver refused requests: %v", errs)
	}
	return rcv.Spans()
}

// flush sends what f's exporter holds, as the CLI's exit does for all.
func flush(t *testing.T, f interface{ Flush(context.Context) error }) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

func one(t *testing.T, spans []tracetest.Span, prefix string) tracetest.Span {
	t.Helper()
	got := tracetest.Named(spans, prefix)
	if len(got) != 1 {
		t.Fatalf("%d spans named %q, want 1; all: %v", len(got), prefix, names(spans))
	}
	return got[0]
}

func names(spans []tracetest.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func wantAttrs(t *testing.T, s tracetest.Span, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got := s.Attrs[k]; !equal(got, v) {
			t.Errorf("%s: %s = %#v, want %#v", s.Name, k, got, v)
		}
	}
}

func equal(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// The span tree of a two-step run with one tool call, under TRACEPARENT:
// the GenAI names and values, the headers and resource the OTEL_*
// variables ask for, and neither the prompt, the answer, the tool's
// arguments and output, nor the key.
// OTEL_EXPORTER_OTLP_PROTOCOL=grpc sends the same spans over OTLP/gRPC,
// to grpc-go's own server with the TraceService registered (issue 38,
// P5): headers as gRPC metadata, gzip as a compressed message.
func TestRunOverGRPC(t *testing.T) {
	t.Parallel()
	for _, compression := range []string{"", "gzip"} {
		rcv := tracetest.StartGRPC(t)
		spans := runTrace(t, rcv, map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":    rcv.URL,
			"OTEL_EXPORTER_OTLP_PROTOCOL":    "grpc",
			"OTEL_EXPORTER_OTLP_HEADERS":     "x-team=blue",
			"OTEL_EXPORTER_OTLP_COMPRESSION": compression,
		}, events(time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)))
		if len(spans) != 4 {
			t.Fatalf("compression %q: %d spans, want 4: %v", compression, len(spans), names(spans))
		}
		root := one(t, spans, "invoke_agent ask")
		wantAttrs(t, root, map[string]any{"gen_ai.conversation.id": "20261127-run1", "ask.run.status": "completed"})
		if hs := rcv.Headers(); len(hs) == 0 || hs[0].Get("x-team") != "blue" {
			t.Errorf("compression %q: metadata %v, want x-team: blue", compression, hs)
		}
	}
}

// A gRPC collector that refuses the call is an error for Flush, not a
// silent loss.
func TestRunOverGRPCRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "16")
		w.Header().Set("Grpc-Message", "bad%20token")
		w.WriteHeader(http.StatusOK)
	}))
	srv.EnableHTTP2 = true
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	tr, err := trace.StartRun(context.Background(), trace.Options{Getenv: env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events(time.Now()) {
		tr.Observe(ev)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tr.Flush(ctx); err == nil || !strings.Contains(err.Error(), "gRPC status 16: bad token") {
		t.Errorf("Flush: %v, want the collector's refusal", err)
	}
}

func TestRunSpanTree(t *testing.T) {
	t.Parallel()
	rcv := tracetest.Start(t)
	spans := runTrace(t, rcv, map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":  "x-team=blue%20team,authorization=Bearer%20otlp-token",
		"OTEL_RESOURCE_ATTRIBUTES":    "deployment.environment=ci,service.name=ci-runner",
		"TRACEPARENT":                 "00-" + parentTrace + "-" + parentSpan + "-01",
		"TRACESTATE":                  "vendor=x",
	}, events(time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)))
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4 (agent, 2 chats, tool; nothing for the unknown event): %v", len(spans), names(spans))
	}
	root := one(t, spans, "invoke_agent ask")
	if root.TraceID != parentTrace || root.ParentID != parentSpan {
		t.Errorf("invoke_agent: trace %s parent %s, want TRACEPARENT's %s and %s", root.TraceID, root.ParentID, parentTrace, parentSpan)
	}
	wantAttrs(t, root, map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "ask",
		"gen_ai.conversation.id": "20261127-run1", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test",
		"gen_ai.usage.input_tokens": 250, "gen_ai.usage.output_tokens": 25, "ask.run.status": "completed"})
	if root.Resource["service.name"] != "ci-runner" || root.Resource["service.version"] != "v9.9.9" || root.Resource["deployment.environment"] != "ci" {
		t.Errorf("resource = %v", root.Resource)
	}
	chats := tracetest.Named(spans, "chat ")
	if len(chats) != 2 {
		t.Fatalf("%d chat spans, want 2", len(chats))
	}
	for _, c := range chats {
		if c.Name != "chat gpt-test" || c.ParentID != root.SpanID || c.TraceID != parentTrace || c.Kind != 3 {
			t.Errorf("%s: parent %s kind %d, want a client child of %s", c.Name, c.ParentID, c.Kind, root.SpanID)
		}
		wantAttrs(t, c, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
			"gen_ai.request.model": "gpt-test", "gen_ai.response.model": "gpt-test-2026", "gen_ai.conversation.id": "20261127-run1",
			"server.address": "api.example.com", "server.port": 8443})
	}
	first, second := chats[0], chats[1]
	if first.Attrs["ask.step"] != int64(1) {
		first, second = second, first
	}
	wantAttrs(t, first, map[string]any{"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 20,
		"gen_ai.usage.cache_read.input_tokens": 64, "gen_ai.usage.cache_creation.input_tokens": 8,
		"gen_ai.response.finish_reasons": []string{"tool_calls"}, "gen_ai.response.id": "resp-1"})
	wantAttrs(t, second, map[string]any{"gen_ai.response.finish_reasons": []string{"stop"}, "gen_ai.response.id": "resp-2"})
	if len(second.Events) != 1 || second.Events[0] != "retry" {
		t.Errorf("the second chat's events = %v, want its retry", second.Events)
	}
	tool := one(t, spans, "execute_tool read_file")
	if tool.ParentID != root.SpanID {
		t.Errorf("execute_tool's parent is %s, want the agent's %s", tool.ParentID, root.SpanID)
	}
	wantAttrs(t, tool, map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file",
		"gen_ai.tool.call.id": "c1", "gen_ai.tool.type": "function"})
	if _, ok := tool.Attrs["error.type"]; ok || tool.StatusCode != 0 {
		t.Errorf("a tool that succeeded has error.type %v, status %d", tool.Attrs["error.type"], tool.StatusCode)
	}
	for _, s := range spans {
		if s.EndNano < s.StartNano || s.StartNano == 0 {
			t.Errorf("%s: from %d to %d", s.Name, s.StartNano, s.EndNano)
		}
		for _, never := range []string{secret, "PROMPT-TEXT", "ANSWER-TEXT", "TOOL-RESULT", "notes.txt", "be brief"} {
			if strings.Contains(s.Raw, never) {
				t.Errorf("%s carries %q without OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT:\n%s", s.Name, never, s.Raw)
			}
		}
	}
	hs := rcv.Headers()
	if len(hs) == 0 || hs[0].Get("X-Team") != "blue team" || hs[0].Get("Authorization") != "Bearer otlp-token" {
		t.Errorf("OTEL_EXPORTER_OTLP_HEADERS were not sent: %v", hs)
	}
}

// With content capture on, the prompt, the answer and the tool's
// arguments and result are there, the key still is not.
func TestRunCapturesContentOnRequest(t *testing.T) {
	t.Parallel()
	rcv := tracetest.Start(t)
	spans := runTrace(t, rcv, map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":                 rcv.URL + "/v1/traces",
		"OTEL_EXPORTER_OTLP_COMPRESSION":                     "gzip",
		"OTEL_SERVICE_NAME":                                  "ci-agent",
		"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
	}, events(time.Now()))
	root := one(t, spans, "invoke_agent")
	if root.ParentID != "" || root.Resource["service.name"] != "ci-agent" {
		t.Errorf("without TRACEPARENT the run's span is a root: parent %q; service %v", root.ParentID, root.Resource["service.name"])
	}
	in, _ := root.Attrs["gen_ai.input.messages"].(string)
	out, _ := root.Attrs["gen_ai.output.messages"].(string)
	if !strings.Contains(in, "PROMPT-TEXT") || !strings.Contains(out, "ANSWER-TEXT") || root.Attrs["gen_ai.system_instructions"] == nil {
		t.Errorf("input %q, output %q, system %v", in, out, root.Attrs["gen_ai.system_instructions"])
	}
	var msgs []struct {
		Role  string
		Parts []struct{ Type, Content string }
	}
	if err := json.Unmarshal([]byte(in), &msgs); err != nil || len(msgs) != 1 || msgs[0].Role != "user" || msgs[0].Parts[0].Type != "text" {
		t.Errorf("gen_ai.input.messages is not the conventions' shape: %s (%v)", in, err)
	}
	tool := one(t, spans, "execute_tool")
	if tool.Attrs["gen_ai.tool.call.arguments"] != `{"path":"notes.txt"}` || !strings.Contains(tool.Attrs["gen_ai.tool.call.result"].(string), "TOOL-RESULT") {
		t.Errorf("tool attributes %v", tool.Attrs)
	}
	chat := tracetest.Named(spans, "chat")
	var sawCall bool
	for _, c := range chat {
		sawCall = sawCall || strings.Contains(c.Attrs["gen_ai.output.messages"].(string), `"tool_call"`)
	}
	if !sawCall {
		t.Error("no chat span's output messages hold the tool call")
	}
	for _, s := range spans {
		if strings.Contains(s.Raw, secret) {
			t.Errorf("%s carries the key:\n%s", s.Name, s.Raw)
		}
	}
}

// Failed and refused calls, a failed request, hooks and checks: error
// types, and spans built from events whose fields this package reads
// from their JSON.
func TestRunFailuresHooksAndChecks(t *testing.T) {
	t.Parallel()
	rcv := tracetest.Start(t)
	now := time.Now()
	spans := runTrace(t, rcv, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}, []records.Event{
		{Type: records.TypeRunStarted, Time: now, ID: "r2", Provider: "anthropic", Model: "claude-test"},
		{Type: records.TypeRequest, Time: now, Step: 1, URL: "https://api.anthropic.com/v1/messages"},
		{Type: records.TypeResponse, Time: now, Step: 1, HTTPStatus: 200, Body: records.BodyJSON([]byte(`{"id":"msg_1","model":"claude-test-1","stop_reason":"tool_use"}`))},
		{Type: records.TypeAssistant, Time: now, Step: 1, Usage: &providers.Usage{}},
		{Type: records.TypeHook, Time: now, ID: "c1", Name: "shell", HookEvent: "PreToolUse", Command: "./lint-hook", Decision: "allow", Reason: "looks fine"},
		{Type: records.TypeToolStarted, Time: now, Step: 1, ID: "c1", Name: "shell"},
		{Type: records.TypeHook, Time: now, ID: "c1", Name: "shell", HookEvent: "PostToolUse", Command: "./fmt-hook", Decision: "allow"},
		{Type: records.TypeToolFinished, Time: now, Step: 1, ID: "c1", Name: "shell", IsError: true, Content: "exit 1"},
		{Type: records.TypeToolDenied, Time: now, Step: 1, ID: "c2", Name: "write_file", Reason: "read-only mode"},
		{Type: records.TypeToolFinished, Time: now, Step: 1, ID: "c3", Name: "read_file", IsError: true, Content: "unreadable arguments"},
		{Type: records.TypeCheckFinished, Time: now, Command: "go test ./...", Round: 1, Passed: ptr(false), CheckExit: ptr(1), Content: "FAIL", DurationMS: 1200},
		{Type: records.TypeNetwork, Time: now, Step: 1, Host: "proxy.golang.org", Port: 443, Allowed: ptr(true)},
		{Type: records.TypeRequest, Time: now, Step: 2, URL: "https://api.anthropic.com/v1/messages"},
		{Type: records.TypeResponse, Time: now, Step: 2, HTTPStatus: 529},
		{Type: records.TypeError, Time: now, Step: 2, Error: "overloaded"},
		{Type: records.TypeRunFinished, Time: now, ID: "r2", Status: "error", ExitCode: 3},
	})
	chat := tracetest.Named(spans, "chat")
	if len(chat) != 2 {
		t.Fatalf("%d chat spans: %v", len(chat), names(spans))
	}
	for _, c := range chat {
		if c.Attrs["gen_ai.provider.name"] != "anthropic" {
			t.Errorf("%s: provider %v", c.Name, c.Attrs["gen_ai.provider.name"])
		}
		if c.Attrs["ask.step"] == int64(2) && (c.Attrs["error.type"] != "error" || c.StatusCode != 2) {
			t.Errorf("the failed request: error.type %v, status %d", c.Attrs["error.type"], c.StatusCode)
		}
		if c.Attrs["ask.step"] == int64(1) && !equal(c.Attrs["gen_ai.response.finish_reasons"], []string{"tool_use"}) {
			t.Errorf("finish reasons %v", c.Attrs["gen_ai.response.finish_reasons"])
		}
	}
	shell := one(t, spans, "execute_tool shell")
	wantAttrs(t, shell, map[string]any{"error.type": "tool_error"})
	if post := one(t, spans, "hook PostToolUse"); post.ParentID != shell.SpanID {
		t.Errorf("a hook run during its call is under %s, want the call's span %s", post.ParentID, shell.SpanID)
	}
	wantAttrs(t, one(t, spans, "execute_tool write_file"), map[string]any{"error.type": "denied", "gen_ai.tool.call.id": "c2"})
	wantAttrs(t, one(t, spans, "execute_tool read_file"), map[string]any{"error.type": "tool_error", "gen_ai.tool.call.id": "c3"})
	hook := one(t, spans, "hook PreToolUse")
	if hook.ParentID != one(t, spans, "invoke_agent").SpanID {
		t.Errorf("a hook before its call is under %s, want the run's span", hook.ParentID)
	}
	wantAttrs(t, hook, map[string]any{"gen_ai.tool.name": "shell", "gen_ai.tool.call.id": "c1",
		"ask.hook.event": "PreToolUse", "ask.hook.command": "./lint-hook", "ask.hook.decision": "allow"})
	if _, ok := hook.Attrs["ask.hook.reason"]; ok {
		t.Error("a hook's reason is content: left out by default")
	}
	check := one(t, spans, "check")
	wantAttrs(t, check, map[string]any{"ask.check.command": "go test ./...", "ask.check.round": 1, "ask.check.passed": false,
		"ask.check.exit_code": 1, "error.type": "check_failed"})
	if strings.Contains(check.Raw, "FAIL") {
		t.Error("a check's output is content: left out by default")
	}
	if d := check.EndNano - check.StartNano; d != uint64(1200*time.Millisecond) {
		t.Errorf("the check's span lasts %d ns, want its 1.2 s", d)
	}
	root := one(t, spans, "invoke_agent")
	if !strings.Contains(strings.Join(root.Events, ","), "network") {
		t.Errorf("the run's events %v have no network connection", root.Events)
	}
	if root.Resource["service.name"] != "ask" {
		t.Errorf("service.name %v, want ask by default", root.Resource["service.name"])
	}
	if root.StatusCode != 2 || root.Attrs["error.type"] != "error" || root.Attrs["ask.run.exit_code"] != int64(3) {
		t.Errorf("failed run: status %d, attrs %v", root.StatusCode, root.Attrs)
	}
}

// Without an endpoint, or with the exporter or the SDK switched off, a
// run has no trace, and a nil trace takes every call.
func TestRunWithoutTraces(t *testing.T) {
	t.Parallel()
	for _, vars := range []map[string]string{
		{},
		{"TRACEPARENT": "00-" + parentTrace + "-" + parentSpan + "-01"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "zipkin"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"},
	} {
		tr, err := trace.StartRun(context.Background(), trace.Options{Getenv: env(vars)})
		if tr != nil || err != nil {
			t.Errorf("%v: a trace (%v, %v)", vars, tr, err)
		}
		tr.Observe(records.Event{Type: records.TypeRunStarted})
		if ctx := tr.CallContext(context.Background(), "c1"); oteltrace.SpanContextFromContext(ctx).IsValid() {
			t.Errorf("%v: a span in the call's context", vars)
		}
	}
	for _, vars := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_SAMPLER": "sometimes"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_HEADERS": "token"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
	} {
		if tr, err := trace.StartRun(context.Background(), trace.Options{Getenv: env(vars)}); tr != nil || err == nil {
			t.Errorf("%v: no error", vars)
		}
	}
	var none *trace.Run
	if err := none.Flush(context.Background()); err != nil {
		t.Errorf("Flush with nothing to send: %v", err)
	}
}

// Samplers: always_off sends nothing; a parent that was not sampled is
// followed, and its decision still reaches the call's context.
func TestRunSampling(t *testing.T) {
	t.Parallel()
	for _, vars := range []map[string]string{
		{"OTEL_TRACES_SAMPLER": "always_off"},
		{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0"},
		{"TRACEPARENT": "00-" + parentTrace + "-" + parentSpan + "-00"},
	} {
		rcv := tracetest.Start(t)
		vars["OTEL_EXPORTER_OTLP_ENDPOINT"] = rcv.URL
		tr, err := trace.StartRun(context.Background(), trace.Options{Getenv: env(vars)})
		if err != nil {
			t.Fatal(err)
		}
		evs := events(time.Now())
		for _, ev := range evs[:5] {
			tr.Observe(ev)
		}
		sc := oteltrace.SpanContextFromContext(tr.CallContext(context.Background(), "c1"))
		if !sc.IsValid() || sc.IsSampled() {
			t.Errorf("%v: the call's context %v, want valid and not sampled", vars, sc)
		}
		for _, ev := range evs[5:] {
			tr.Observe(ev)
		}
		flush(t, tr)
		if n := len(rcv.Spans()); n != 0 {
			t.Errorf("%v: %d spans sent", vars, n)
		}
	}
}

// A tool call's context carries its execute_tool span: what an MCP
// request's _meta then carries.
func TestCallContextIsTheToolSpan(t *testing.T) {
	t.Parallel()
	rcv := tracetest.Start(t)
	tr, _ := trace.StartRun(context.Background(), trace.Options{Getenv: env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL})})
	evs := events(time.Now())
	for _, ev := range evs[:5] { // through tool.started
		tr.Observe(ev)
	}
	inCall := oteltrace.SpanContextFromContext(tr.CallContext(context.Background(), "c1"))
	for _, ev := range evs[5:] {
		tr.Observe(ev)
	}
	flush(t, tr)
	tool := one(t, rcv.Spans(), "execute_tool")
	if inCall.SpanID().String() != tool.SpanID || inCall.TraceID().String() != tool.TraceID || !inCall.IsSampled() {
		t.Errorf("the call's context holds %v; the tool's span is %s/%s", inCall, tool.TraceID, tool.SpanID)
	}
}

// A batch is one trace: its span, a span per task, and each task's run
// under its task.
func TestBatchIsOneTrace(t *testing.T) {
	t.Parallel()
	rcv := tracetest.Start(t)
	getenv := env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL})
	ctx, b := trace.StartBatch(context.Background(), trace.Options{Getenv: getenv})
	for _, id := range []string{"t1", "t2"} {
		tctx, task := b.StartTask(ctx, id)
		tr, err := trace.StartRun(tctx, trace.Options{Getenv: getenv})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events(time.Now()) {
			tr.Observe(ev)
		}
		task.End("completed", 0)
	}
	b.End()
	flush(t, b)
	spans := rcv.Spans()
	var batch tracetest.Span
	for _, s := range tracetest.Named(spans, "ask batch") {
		if s.ParentID == "" {
			batch = s
		}
	}
	tasks := tracetest.Named(spans, "ask batch task")
	runs := tracetest.Named(spans, "invoke_agent")
	if len(tasks) != 2 || len(runs) != 2 {
		t.Fatalf("%d tasks and %d runs: %v", len(tasks), len(runs), names(spans))
	}
	byID := map[string]tracetest.Span{}
	for _, s := range spans {
		if s.TraceID != batch.TraceID {
			t.Errorf("%s is in trace %s, not the batch's %s", s.Name, s.TraceID, batch.TraceID)
		}
		byID[s.SpanID] = s
	}
	for _, r := range runs {
		task := byID[r.ParentID]
		if task.Name != "ask batch task" || task.ParentID != batch.SpanID {
			t.Errorf("a run's parent is %q (under %s), want a task under the batch", task.Name, task.ParentID)
		}
	}
	var nilBatch *trace.Batch
	c, task := nilBatch.StartTask(context.Background(), "x")
	task.End("completed", 0)
	nilBatch.End()
	if oteltrace.SpanContextFromContext(c).IsValid() {
		t.Error("a nil batch put a span in the context")
	}
}

// A collector that takes the connection and never answers costs the exit
// FlushTimeout, and no more: Flush returns at its deadline with an error.
func TestFlushWithTheCollectorDown(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	tr, _ := trace.StartRun(context.Background(), trace.Options{Getenv: env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + ln.Addr().String()})})
	for _, ev := range events(time.Now()) {
		tr.Observe(ev)
	}
	// As FlushAtExit, for this run's exporter alone (other tests run).
	ctx, cancel := context.WithTimeout(context.Background(), trace.FlushTimeout)
	defer cancel()
	start := time.Now()
	err = tr.Flush(ctx)
	took := time.Since(start)
	if took > trace.FlushTimeout+500*time.Millisecond {
		t.Errorf("the exit waited %s for a collector that does not answer; the bound is %s", took, trace.FlushTimeout)
	}
	if err == nil {
		t.Error("no error for spans that were not sent")
	}
}
