package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/settings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/sandbox"
)

// The test binary doubles as an MCP server whose tool writes a file: with
// ASK_RUN_TEST_MCP set it serves instead of testing.
const mcpServerVar = "ASK_RUN_TEST_MCP"

func TestMain(m *testing.M) {
	sandbox.Main()
	if os.Getenv(mcpServerVar) != "" {
		os.Exit(serveNotes())
	}
	os.Exit(m.Run())
}

func serveNotes() int {
	s := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "save_note", Description: "Save a note in the working directory",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Text string }
			json.Unmarshal(req.Params.Arguments, &args)
			err := os.WriteFile("note.txt", []byte(args.Text), 0o644)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint("saved: ", err)}}}, nil
		})
	// A read-only tool that reaches the network on the model's word (H4).
	s.AddTool(&sdk.Tool{Name: "fetch", Description: "Fetch a URL", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ URL string }
			json.Unmarshal(req.Params.Arguments, &args)
			resp, err := http.Get(args.URL)
			if err != nil {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "fetch failed: " + err.Error()}}, IsError: true}, nil
			}
			resp.Body.Close()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "fetched: " + resp.Status}}}, nil
		})
	// trace_meta answers with the trace context the call's _meta carried.
	s.AddTool(&sdk.Tool{Name: "trace_meta", Description: "Show the call's trace context",
		InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint("traceparent=", req.Params.Meta["traceparent"])}}}, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// agentRun is a run under default settings plus --yes, as a person starts
// one, in a working directory holding files.
func agentRun(t *testing.T, files map[string]string, replies []fakeprovider.Reply, extra func(*Settings)) (*Result, []records.Event) {
	t.Helper()
	srv := fakeprovider.Start(replies...)
	t.Cleanup(srv.Close)
	e := testEnv(t, map[string]string{"OPENAI_API_KEY": "fake-test-key-0000", "PATH": os.Getenv("PATH")})
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(e.Wd, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	flags := Settings{Values: settings.Values{Provider: Given("openai", "test"), BaseURL: Given(srv.URL, "test"), Yes: Given(true, "test")}}
	if extra != nil {
		extra(&flags)
	}
	s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: flags})
	if err != nil {
		t.Fatal(err)
	}
	var res *Result
	transcript := execute(t, s, e, "fix the bugs in code.txt until the test passes", func(r *Result) { res = r })
	events, err := records.Read(bytes.NewReader(transcript))
	if err != nil {
		t.Fatal(err)
	}
	return res, events
}

// A real agent's work: run the tests, edit, run the same tests again, for
// 60 steps and more; it ends with the model's answer (issue 30).
func TestLongTestEditTestRunCompletes(t *testing.T) {
	if testing.Short() {
		t.Skip("62 shell and edit calls")
	}
	t.Parallel()
	const bugs = 30
	var code strings.Builder
	for i := range bugs {
		fmt.Fprintf(&code, "line %d: bug\n", i)
	}
	test := `{"command":"sh test.sh"}`
	var replies []fakeprovider.Reply
	id := 0
	step := func(name, args string) {
		id++
		replies = append(replies, fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call(fmt.Sprint("c", id), name, args)}})
	}
	for i := range bugs {
		step("shell", test)
		step("edit_file", fmt.Sprintf(`{"path":"code.txt","old_text":"line %d: bug","new_text":"line %d: fixed"}`, i, i))
	}
	step("shell", test)
	replies = append(replies, fakeprovider.Reply{Text: "All 30 bugs are fixed and the test passes."})

	res, events := agentRun(t, map[string]string{
		"code.txt": code.String(),
		// The same failure, word for word, until every bug is gone.
		"test.sh": "if grep -q bug code.txt; then echo 'FAIL: code.txt still has bugs'; exit 1; fi; echo PASS\n",
	}, replies, nil)
	if res.Status != loop.StatusCompleted || res.Steps != 2*bugs+2 {
		t.Fatalf("status %s after %d steps (%v), want completed after %d", res.Status, res.Steps, res.Err, 2*bugs+2)
	}
	if res.Answer != "All 30 bugs are fixed and the test passes." {
		t.Errorf("answer = %q", res.Answer)
	}
	if last := res.Calls[len(res.Calls)-1]; last.IsError || !strings.Contains(last.Content, "PASS") {
		t.Errorf("last test run: %q", last.Content)
	}
	if first := events[0]; first.Settings.MaxSteps != 100 || first.Settings.Timeout != "30m0s" {
		t.Errorf("defaults: max steps %d, timeout %s; want 100 and 30m", first.Settings.MaxSteps, first.Settings.Timeout)
	}
	if len(res.Changes) != bugs {
		t.Errorf("%d changes, want one per edit: %+v", len(res.Changes), res.Changes)
	}
}

// A model stuck on the same call answered the same way stops on the
// fifth, with every call answered.
func TestFiveIdenticalCallsStopTheRun(t *testing.T) {
	t.Parallel()
	var replies []fakeprovider.Reply
	for i := range 6 {
		replies = append(replies, fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call(fmt.Sprint("c", i), "shell", `{"command":"cat code.txt"}`)}})
	}
	replies = append(replies, fakeprovider.Reply{Text: "never asked"})
	res, events := agentRun(t, map[string]string{"code.txt": "line 0: bug\n"}, replies, nil)
	if res.Status != loop.StatusRepeatedCall || len(res.Calls) != 5 || res.Steps != 5 {
		t.Fatalf("status %s after %d steps and %d calls, want repeated_call after 5", res.Status, res.Steps, len(res.Calls))
	}
	if last := events[len(events)-1]; last.Status != loop.StatusRepeatedCall {
		t.Errorf("run.finished status %q", last.Status)
	}
}

// What an MCP tool changes is reported like what a command changes
// (issue 29: the watcher wraps every call that may change files).
func TestMCPToolChangesAreReported(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "notes")
	if err := os.Symlink(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	res, events := agentRun(t, nil, []fakeprovider.Reply{
		{Calls: []providers.ToolCall{fakeprovider.Call("c1", "notes__save_note", `{"text":"remember"}`)}},
		{Text: "saved"},
	}, func(s *Settings) {
		s.MCP = Given([]string{mcpServerVar + "=1 '" + bin + "' --test.run=^$"}, "test")
	})
	if res.Status != loop.StatusCompleted || len(res.Calls) != 1 || res.Calls[0].IsError {
		t.Fatalf("status %s, calls %+v", res.Status, res.Calls)
	}
	if len(res.Changes) != 1 || res.Changes[0].Path != "note.txt" || res.Changes[0].Action != "created" || res.Changes[0].Tool != "notes__save_note" {
		t.Errorf("changes = %+v, want note.txt created by notes__save_note", res.Changes)
	}
	var seen bool
	for _, ev := range events {
		seen = seen || (ev.Type == records.TypeFileChanged && ev.Change != nil && ev.Path == "note.txt" && ev.Step == 1)
	}
	if !seen {
		t.Errorf("no file.changed event for note.txt in step 1")
	}
}
