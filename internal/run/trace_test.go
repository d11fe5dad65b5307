package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/trace"
	"github.com/ask-cli/ask/internal/trace/tracetest"
)

// A traced run of two steps and one MCP tool call (DESIGN §6, Traces):
// its spans reach the collector under TRACEPARENT, and the MCP request
// carries the tool call's span in its _meta.
const (
	traceKey    = "fake-test-key-0000-TRACE"
	traceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tracePrompt = "PROMPT-TEXT: what is the trace?"
)

// tracedRun runs two steps and one MCP tool call with its spans sent to
// the OTLP/HTTP endpoint, under TRACEPARENT, and flushes them.
func tracedRun(t *testing.T, endpoint string) (*Run, *Result) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "notes")
	if err := os.Symlink(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "notes__trace_meta", `{}`)}},
		fakeprovider.Reply{Text: "the answer"},
	)
	t.Cleanup(srv.Close)
	e := testEnv(t, map[string]string{"OPENAI_API_KEY": traceKey, "PATH": os.Getenv("PATH"),
		"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "TRACEPARENT": traceParent})
	s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: Settings{Values: settings.Values{
		Provider: Given("openai", "test"), BaseURL: Given(srv.URL, "test"), Yes: Given(true, "test"),
		MCP: Given([]string{mcpServerVar + "=1 '" + bin + "' --test.run=^$"}, "test")}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(context.Background(), s, e)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	res := r.Execute(context.Background(), tracePrompt, Output{})
	if res.Status != loop.StatusCompleted || len(res.Calls) != 1 || res.Calls[0].IsError {
		t.Fatalf("status %s, calls %+v", res.Status, res.Calls)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := trace.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return r, res
}

// checkTrace checks the spans of tracedRun, however they were read back.
func checkTrace(t *testing.T, r *Run, res *Result, spans []tracetest.Span) {
	t.Helper()
	byName := map[string][]tracetest.Span{}
	for _, sp := range spans {
		byName[sp.Name] = append(byName[sp.Name], sp)
		if sp.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("%s is in trace %s, not TRACEPARENT's", sp.Name, sp.TraceID)
		}
		if strings.Contains(sp.Raw, traceKey) || strings.Contains(sp.Raw, "PROMPT-TEXT") || strings.Contains(sp.Raw, "the answer") {
			t.Errorf("%s carries the key, the prompt or the answer:\n%s", sp.Name, sp.Raw)
		}
	}
	root, chats, tools := byName["invoke_agent ask"], byName["chat "+r.ModelName], byName["execute_tool notes__trace_meta"]
	if len(root) != 1 || len(chats) != 2 || len(tools) != 1 || len(spans) != 4 {
		t.Fatalf("spans %v, want invoke_agent, two chats and one execute_tool", byName)
	}
	if root[0].ParentID != "00f067aa0ba902b7" || root[0].Attrs["gen_ai.conversation.id"] != res.ID || root[0].Attrs["gen_ai.agent.name"] != "ask" {
		t.Errorf("invoke_agent: parent %s, attributes %v; want TRACEPARENT's span and the run id %s", root[0].ParentID, root[0].Attrs, res.ID)
	}
	if root[0].Resource["service.name"] != "ask" {
		t.Errorf("service %v", root[0].Resource["service.name"])
	}
	for _, sp := range append(chats, tools...) {
		if sp.ParentID != root[0].SpanID {
			t.Errorf("%s: parent %s, want the run's %s", sp.Name, sp.ParentID, root[0].SpanID)
		}
	}
	for _, c := range chats {
		for _, k := range []string{"gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model", "gen_ai.usage.input_tokens",
			"gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens", "gen_ai.response.finish_reasons", "gen_ai.conversation.id"} {
			if _, ok := c.Attrs[k]; !ok {
				t.Errorf("%s has no %s: %v", c.Name, k, c.Attrs)
			}
		}
	}
	if tools[0].Attrs["gen_ai.tool.name"] != "notes__trace_meta" || tools[0].Attrs["gen_ai.tool.call.id"] != "c1" {
		t.Errorf("execute_tool attributes %v", tools[0].Attrs)
	}
	want := "traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-" + tools[0].SpanID + "-01"
	if got := res.Calls[0].Content; !strings.Contains(got, want) {
		t.Errorf("the MCP server saw %q in _meta, want %q", got, want)
	}
}

// A traced run of two steps and one MCP tool call (DESIGN §6, Traces):
// its spans reach the collector under TRACEPARENT, and the MCP request
// carries the tool call's span in its _meta.
func TestExecuteExportsTheRunsTrace(t *testing.T) {
	t.Parallel()
	rcv := tracetest.Start(t)
	r, res := tracedRun(t, rcv.URL)
	checkTrace(t, r, res, rcv.Spans())
}

// The same run read back from a real Jaeger's query API:
// scripts/jaeger-traces.sh builds and starts one, and runs this test with
// ASK_TEST_JAEGER set to its query URL (OTLP/HTTP on port 4318).
func TestJaegerReadsTheRunsTrace(t *testing.T) {
	query := os.Getenv("ASK_TEST_JAEGER")
	if query == "" {
		t.Skip("no Jaeger: scripts/jaeger-traces.sh runs this test against one")
	}
	otlp := os.Getenv("ASK_TEST_JAEGER_OTLP")
	if otlp == "" {
		otlp = "http://127.0.0.1:4318"
	}
	r, res := tracedRun(t, otlp)
	var spans []tracetest.Span
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var err error
		if spans, err = jaegerTrace(query, "4bf92f3577b34da6a3ce929d0e0e4736", res.ID); err != nil {
			t.Fatal(err)
		}
		if len(spans) >= 4 {
			break
		}
	}
	checkTrace(t, r, res, spans)
}

// jaegerTrace reads a trace from Jaeger's query API (/api/traces/ID) as
// spans, keeping those of the run conversation (the trace id is shared by
// every run of the test under the same TRACEPARENT).
func jaegerTrace(query, traceID, conversation string) ([]tracetest.Span, error) {
	resp, err := http.Get(strings.TrimRight(query, "/") + "/api/traces/" + traceID)
	if err != nil {
		return nil, fmt.Errorf("jaeger query: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode == http.StatusNotFound {
		return nil, err
	}
	var got struct {
		Data []struct {
			Spans []struct {
				TraceID, SpanID, OperationName string
				References                     []struct{ RefType, SpanID string }
				Tags                           []struct {
					Key   string
					Value any
				}
				ProcessID string
			}
			Processes map[string]struct{ ServiceName string }
		}
	}
	if err := json.Unmarshal(body, &got); err != nil {
		return nil, fmt.Errorf("jaeger query: %w: %s", err, body)
	}
	var all []tracetest.Span
	for _, d := range got.Data {
		for _, s := range d.Spans {
			sp := tracetest.Span{TraceID: s.TraceID, SpanID: s.SpanID, Name: s.OperationName, Attrs: map[string]any{},
				Resource: map[string]any{"service.name": d.Processes[s.ProcessID].ServiceName}, Raw: fmt.Sprint(s)}
			for _, ref := range s.References {
				if ref.RefType == "CHILD_OF" {
					sp.ParentID = ref.SpanID
				}
			}
			for _, tag := range s.Tags {
				sp.Attrs[tag.Key] = tag.Value
			}
			all = append(all, sp)
		}
	}
	// The run's spans: its root (by conversation id) and the root's children.
	var root string
	for _, s := range all {
		if s.Name == "invoke_agent ask" && s.Attrs["gen_ai.conversation.id"] == conversation {
			root = s.SpanID
		}
	}
	var out []tracetest.Span
	for _, s := range all {
		if s.SpanID == root || (root != "" && s.ParentID == root) {
			out = append(out, s)
		}
	}
	return out, nil
}

// OTEL_* variables that cannot be followed are a warning, and the run goes
// on without traces; the warning does not quote the headers (credentials).
func TestExecuteWarnsOfTracesItCannotSend(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "42"})
	defer srv.Close()
	e := testEnv(t, map[string]string{"OPENAI_API_KEY": traceKey,
		"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=SECRET-HEADER"})
	var notes strings.Builder
	e.Notes = &notes
	s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: Settings{Values: settings.Values{Provider: Given("openai", "test"), BaseURL: Given(srv.URL, "test")}}})
	if err != nil {
		t.Fatal(err)
	}
	execute(t, s, e, "q", func(res *Result) {
		if res.Status != loop.StatusCompleted || res.ExitCode != 0 {
			t.Errorf("status %s, exit %d", res.Status, res.ExitCode)
		}
	})
	if got := notes.String(); !strings.Contains(got, "warning: traces:") || !strings.Contains(got, "localhost:4318") || strings.Contains(got, "SECRET-HEADER") {
		t.Errorf("notes = %q", got)
	}
}
