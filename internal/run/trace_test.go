package run

import (
	"context"
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
func TestExecuteExportsTheRunsTrace(t *testing.T) {
	t.Parallel()
	const key = "fake-test-key-0000-TRACE"
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	rcv := tracetest.Start(t)
	bin := filepath.Join(t.TempDir(), "notes")
	if err := os.Symlink(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "notes__trace_meta", `{}`)}},
		fakeprovider.Reply{Text: "the answer"},
	)
	defer srv.Close()
	e := testEnv(t, map[string]string{"OPENAI_API_KEY": key, "PATH": os.Getenv("PATH"),
		"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "TRACEPARENT": parent})
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
	defer r.Close()
	res := r.Execute(context.Background(), "PROMPT-TEXT: what is the trace?", Output{})
	if res.Status != loop.StatusCompleted || len(res.Calls) != 1 || res.Calls[0].IsError {
		t.Fatalf("status %s, calls %+v", res.Status, res.Calls)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := trace.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	byName := map[string][]tracetest.Span{}
	for _, sp := range spans {
		byName[sp.Name] = append(byName[sp.Name], sp)
		if sp.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("%s is in trace %s, not TRACEPARENT's", sp.Name, sp.TraceID)
		}
		if strings.Contains(sp.Raw, key) || strings.Contains(sp.Raw, "PROMPT-TEXT") || strings.Contains(sp.Raw, "the answer") {
			t.Errorf("%s carries the key, the prompt or the answer:\n%s", sp.Name, sp.Raw)
		}
	}
	root, chats, tools := byName["invoke_agent ask"], byName["chat "+r.ModelName], byName["execute_tool notes__trace_meta"]
	if len(root) != 1 || len(chats) != 2 || len(tools) != 1 || len(spans) != 4 {
		t.Fatalf("spans %v, want invoke_agent, two chats and one execute_tool", byName)
	}
	if root[0].ParentID != "00f067aa0ba902b7" || root[0].Attrs["gen_ai.conversation.id"] != res.ID {
		t.Errorf("invoke_agent: parent %s, conversation %v; want TRACEPARENT's span and the run id %s", root[0].ParentID, root[0].Attrs["gen_ai.conversation.id"], res.ID)
	}
	for _, sp := range append(chats, tools...) {
		if sp.ParentID != root[0].SpanID {
			t.Errorf("%s: parent %s, want the run's %s", sp.Name, sp.ParentID, root[0].SpanID)
		}
	}
	if chats[0].Attrs["gen_ai.response.model"] != "fake-model" || chats[0].Attrs["gen_ai.usage.input_tokens"] == nil {
		t.Errorf("chat attributes %v", chats[0].Attrs)
	}
	want := "traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-" + tools[0].SpanID + "-01"
	if got := res.Calls[0].Content; !strings.Contains(got, want) {
		t.Errorf("the MCP server saw %q in _meta, want %q", got, want)
	}
}
