package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/tidwall/gjson"
	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/batch"
	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/trace"
	"github.com/ask-cli/ask/internal/trace/tracetest"
)

var update = flag.Bool("update", false, "rewrite golden files and scripts' expected output")

func TestMain(m *testing.M) {
	sandbox.Main() // the sandbox's children are this test binary
	testscript.Main(m, map[string]func(){
		"ask":     func() { os.Exit(start(os.Args)) },
		"fakemcp": func() { os.Exit(fakeMCP()) },
		// The MCP conformance suite's client command, and the browser
		// its sign-ins open (mcp_conformance_test.go).
		"askconformance": func() { os.Exit(conformanceClient()) },
		"browserfollow":  func() { os.Exit(browserFollow()) },
	})
}

func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			env.Values[fakeKey{}] = &fakeHolder{}
			env.Setenv("HOME", env.WorkDir)
			// Claude Code's published hook examples, run unchanged
			// (testdata/claudecode/PROVENANCE.md).
			examples, err := filepath.Abs("testdata/claudecode")
			if err != nil {
				return err
			}
			env.Setenv("CLAUDE_EXAMPLES", examples)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"fakeprovider": cmdFakeProvider,
			"fakerequests": cmdFakeRequests,
			"jsonpath":     cmdJSONPath,
			"holdoutput":   cmdHoldOutput,
		},
	})
}

type fakeKey struct{}

type fakeHolder struct {
	mu  sync.Mutex
	srv *fakeprovider.Server
}

// scriptReply is a reply in a script's replies file.
type scriptReply struct {
	Text     string               `json:"text"`
	Calls    []providers.ToolCall `json:"calls"`
	BodyFile string               `json:"body_file"`
	Status   int                  `json:"status"`
	Usage    json.RawMessage      `json:"usage"`
}

// cmdFakeProvider starts a scripted provider: `fakeprovider REPLIES.json`.
// It points ask at it through ASK_PROVIDER, ASK_BASE_URL and a test key.
func cmdFakeProvider(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakeprovider REPLIES.json")
	}
	var script []scriptReply
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &script); err != nil {
		ts.Fatalf("replies: %v", err)
	}
	var replies []fakeprovider.Reply
	for _, r := range script {
		reply := fakeprovider.Reply{Text: r.Text, Calls: r.Calls, Status: r.Status, Usage: r.Usage}
		if r.BodyFile != "" {
			reply.Body = ts.ReadFile(r.BodyFile)
		}
		replies = append(replies, reply)
	}
	srv := fakeprovider.Start(replies...)
	ts.Defer(srv.Close)
	h := ts.Value(fakeKey{}).(*fakeHolder)
	h.mu.Lock()
	h.srv = srv
	h.mu.Unlock()
	ts.Setenv("ASK_PROVIDER", "openai")
	ts.Setenv("ASK_BASE_URL", srv.URL)
	ts.Setenv("OPENAI_API_KEY", "fake-test-not-a-real-key-0000")
}

// cmdFakeRequests writes the request bodies the fake provider received to
// FILE, one a line: `fakerequests FILE`.
func cmdFakeRequests(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakerequests FILE")
	}
	h := ts.Value(fakeKey{}).(*fakeHolder)
	h.mu.Lock()
	srv := h.srv
	h.mu.Unlock()
	if srv == nil {
		ts.Fatalf("fakerequests: no fakeprovider running")
	}
	var b bytes.Buffer
	for _, r := range srv.Requests() {
		if err := json.Compact(&b, r); err != nil {
			ts.Fatalf("request is not JSON: %v", err)
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(ts.MkAbs(args[0]), b.Bytes(), 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
}

// cmdHoldOutput opens a result file as ask batch does, holding its lock
// until the script ends: `holdoutput FILE`.
func cmdHoldOutput(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: holdoutput FILE")
	}
	out, err := batch.OpenOutput(ts.MkAbs(args[0]), batch.OutputOptions{})
	if err != nil {
		ts.Fatalf("holdoutput: %v", err)
	}
	ts.Defer(func() { out.Close() })
}

// cmdJSONPath checks a value in a JSON file, as a script would with jq:
// `jsonpath FILE PATH WANT` compares the compact JSON at the gjson PATH
// (e.g. value.n) with WANT; `! jsonpath FILE PATH` says PATH is absent.
// FILE may be stdout, for the last command's output.
func cmdJSONPath(ts *testscript.TestScript, neg bool, args []string) {
	if (neg && len(args) != 2) || (!neg && len(args) != 3) {
		ts.Fatalf("usage: jsonpath FILE PATH WANT, or ! jsonpath FILE PATH")
	}
	content := ts.ReadFile(args[0])
	if !gjson.Valid(content) {
		ts.Fatalf("%s is not JSON: %q", args[0], content)
	}
	got := gjson.Get(content, args[1])
	if neg {
		if got.Exists() {
			ts.Fatalf("%s has %s: %s", args[0], args[1], got.Raw)
		}
		return
	}
	var compact bytes.Buffer
	if !got.Exists() {
		ts.Fatalf("%s has no %s", args[0], args[1])
	}
	if err := json.Compact(&compact, []byte(got.Raw)); err != nil {
		ts.Fatalf("%v", err)
	}
	if compact.String() != args[2] {
		ts.Fatalf("%s %s = %s, want %s", args[0], args[1], compact.String(), args[2])
	}
}

// askResult is what one in-process run printed and returned.
type askResult struct {
	stdout, stderr string
	code           int
}

type askEnv struct {
	env   map[string]string
	stdin string
	// in, when set, is stdin instead of the string stdin.
	in  io.Reader
	tty bool // stdout and stderr are terminals
	// outTTY makes stdout alone a terminal.
	outTTY bool
	wd     string
	server *fakeprovider.Server
	// idle, when set, shortens the stream idle timeout.
	idle time.Duration
	// stdout, when set, receives stdout instead of the result.
	stdout io.Writer
	// stderr, when set, receives stderr instead of the result.
	stderr io.Writer
	// ttyPath stands in for /dev/tty (with tty set).
	ttyPath string
	// transport, when set, answers every HTTP request instead of a server.
	transport http.RoundTripper
	// sandbox, when set, is what the kernel is said to confine; otherwise
	// the runs meet a kernel that confines nothing, so that --safe refuses
	// every command on any machine. The sandbox's own tests use the real
	// one (sandbox.Check).
	sandbox func() sandbox.Support
}

// noSandbox is a kernel that cannot confine, pinned for the tests.
func noSandbox() sandbox.Support {
	const why = "the tests say so (askEnv.sandbox)"
	return sandbox.Support{FileSystem: why, Network: why}
}

// runAsk runs the CLI in-process.
func runAsk(t *testing.T, e askEnv, args ...string) askResult {
	t.Helper()
	var out, errb strings.Builder
	env := map[string]string{}
	if e.server != nil {
		env["ASK_PROVIDER"] = "openai"
		env["ASK_BASE_URL"] = e.server.URL
		env["OPENAI_API_KEY"] = "fake-test-not-a-real-key-0000"
	}
	for k, v := range e.env {
		env[k] = v
	}
	wd := e.wd
	if wd == "" {
		wd = t.TempDir()
	}
	var stdout io.Writer = &out
	if e.stdout != nil {
		stdout = e.stdout
	}
	var stderr io.Writer = &errb
	if e.stderr != nil {
		stderr = e.stderr
	}
	stdio := &IO{
		In: strings.NewReader(e.stdin), Out: stdout, Err: stderr,
		InTTY: e.stdin == "" && e.in == nil, OutTTY: e.tty || e.outTTY, ErrTTY: e.tty,
		Getenv:  func(k string) string { return env[k] },
		Environ: func() []string { return nil },
		HTTP:    &http.Client{Timeout: 30 * time.Second, Transport: e.transport},
		Now:     func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) },
		Wd:      wd,
		Net:     providers.DefaultNet,
		TTYPath: e.ttyPath,

		sandboxCheck: noSandbox,
	}
	if e.sandbox != nil {
		stdio.sandboxCheck = e.sandbox
	}
	if e.in != nil {
		stdio.In = e.in
	}
	if e.idle > 0 {
		stdio.Net.StreamIdle = e.idle
	}
	code := runCLI(context.Background(), append([]string{"ask"}, args...), stdio)
	return askResult{stdout: out.String(), stderr: errb.String(), code: code}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	text := func(s string) fakeprovider.Reply { return fakeprovider.Reply{Text: s} }
	loopForever := func(n int) []fakeprovider.Reply {
		var rs []fakeprovider.Reply
		for i := range n {
			rs = append(rs, fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call(fmt.Sprint(i), "list_directory", fmt.Sprintf(`{"path":".","n":%d}`, i))}})
		}
		return rs
	}
	tests := []struct {
		name      string
		replies   []fakeprovider.Reply
		noServer  bool
		env       map[string]string
		args      []string
		stdin     string
		wantCode  int
		wantOut   string
		wantErrRe string // substring of stderr
		// slow waits out real retry delays: not under -short, where
		// internal/run's TestRetriesFlag keeps exit 3 after retries.
		slow bool
	}{
		{name: "answer", replies: []fakeprovider.Reply{text("42")}, args: []string{"what?"}, wantCode: 0, wantOut: "42\n"},
		{name: "flags after the prompt", replies: []fakeprovider.Reply{text("42")}, args: []string{"what?", "--no-stream", "-q"}, wantCode: 0, wantOut: "42\n"},
		{name: "both forms of a flag", replies: []fakeprovider.Reply{text("42")}, args: []string{"-q", "what?", "--quiet", "-m=fake", "--model", "fake-2"}, wantCode: 0, wantOut: "42\n"},
		{name: "a run of switches and a long form", replies: []fakeprovider.Reply{text("42")}, args: []string{"-qy", "--yes", "what?"}, wantCode: 0, wantOut: "42\n"},
		{name: "a flag that widens, after the prompt", args: []string{"what?", "--yes"}, wantCode: 2, wantErrRe: "put -- before the prompt"},
		{name: "no prompt", args: nil, wantCode: 2, wantErrRe: "no prompt"},
		{name: "unknown flag", args: []string{"--frobnicate", "x"}, wantCode: 2, wantErrRe: "frobnicate"},
		{name: "bad max steps", args: []string{"--max-steps", "0", "x"}, wantCode: 2, wantErrRe: "--max-steps"},
		{name: "unknown provider", noServer: true, args: []string{"-p", "nope", "x"}, wantCode: 2, wantErrRe: "unknown provider \"nope\""},
		{name: "missing key names the variable", noServer: true, args: []string{"-p", "anthropic", "x"}, wantCode: 4, wantErrRe: "set ANTHROPIC_API_KEY"},
		{name: "rejected key", replies: []fakeprovider.Reply{{Status: 401, Body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`}},
			args: []string{"x"}, wantCode: 4, wantErrRe: "HTTP 401"},
		{name: "provider error after retries", replies: []fakeprovider.Reply{{Status: 500, Body: "<html><title>Bad Gateway</title></html>"}, {Status: 500, Body: "oops"}, {Status: 500, Body: "oops"}},
			args: []string{"x", "--no-stream"}, wantCode: 3, wantErrRe: "HTTP 500", slow: true},
		{name: "max steps", replies: loopForever(3), args: []string{"--max-steps", "2", "x"}, wantCode: 5, wantErrRe: "stopped after 2 steps"},
		{name: "no key and no Ollama", noServer: true, env: map[string]string{"OLLAMA_HOST": "http://127.0.0.1:1"}, args: []string{"--retries", "0", "x"},
			wantCode: 4, wantErrRe: "no provider key is set"},
		{name: "a prompt after -p", noServer: true, args: []string{"-p", "what is this"}, wantCode: 2, wantErrRe: "unknown provider \"what is this\""},
		{name: "bad duration", args: []string{"--timeout", "5", "x"}, wantCode: 2, wantErrRe: "give a duration such as 30s or 5m"},
		{name: "command word", args: []string{"tool", "list"}, wantCode: 2, wantErrRe: "ask -- tool list"},
		{name: "json and events", args: []string{"--json", "--events", "x"}, wantCode: 2, wantErrRe: "choose one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.slow && testing.Short() {
				t.Skip("slow under -short: it waits out the retries' backoff")
			}
			e := askEnv{env: tt.env, stdin: tt.stdin}
			if !tt.noServer {
				e.server = fakeprovider.Start(tt.replies...)
				defer e.server.Close()
			}
			r := runAsk(t, e, tt.args...)
			if r.code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr: %s", r.code, tt.wantCode, r.stderr)
			}
			if tt.wantOut != "" && r.stdout != tt.wantOut {
				t.Errorf("stdout %q, want %q", r.stdout, tt.wantOut)
			}
			// Retries may add notes; the error itself is the last line, and
			// only one line.
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if last := lines[len(lines)-1]; !strings.Contains(last, tt.wantErrRe) {
				t.Errorf("last stderr line %q lacks %q", last, tt.wantErrRe)
			}
			for _, l := range lines {
				if l != "" && !strings.HasPrefix(l, "ask: ") {
					t.Errorf("stderr line %q is not an ask: message", l)
				}
			}
		})
	}
}

func TestTerminalStreamsTheAnswer(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "streamed answer"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv, tty: true}, "q")
	if r.code != 0 || r.stdout != "streamed answer\n" {
		t.Fatalf("code %d stdout %q", r.code, r.stdout)
	}
	if !strings.Contains(r.stderr, "step 1/100") {
		t.Errorf("no live status on a terminal stderr: %q", r.stderr)
	}
	piped := runAsk(t, askEnv{server: fakeprovider.Start(fakeprovider.Reply{Text: "x"})}, "q")
	if piped.stderr != "" {
		t.Errorf("stderr not empty when piped: %q", piped.stderr)
	}
}

func TestStdinIsContext(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "ok"}, fakeprovider.Reply{Text: "ok"})
	defer srv.Close()
	runAsk(t, askEnv{server: srv, stdin: "line one\nline two\n"}, "summarize")
	runAsk(t, askEnv{server: srv, stdin: "only stdin"}, "-")
	reqs := srv.Requests()
	var a, b struct {
		Messages []struct{ Role, Content string }
	}
	json.Unmarshal(reqs[0], &a)
	json.Unmarshal(reqs[1], &b)
	if got := a.Messages[len(a.Messages)-1].Content; got != "summarize\n\n<stdin>\nline one\nline two\n</stdin>" {
		t.Errorf("prompt with stdin = %q", got)
	}
	if got := b.Messages[len(b.Messages)-1].Content; got != "only stdin" {
		t.Errorf("prompt from stdin = %q", got)
	}
	if a.Messages[0].Role != "system" || !strings.Contains(a.Messages[0].Content, "2026-11-22") {
		t.Errorf("first message is not the default system prompt: %+v", a.Messages[0])
	}
}

func TestJSONOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "read_file", `{"path":"a.txt"}`)}},
		fakeprovider.Reply{Text: "it says alpha"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv, wd: dir}, "--json", "what is in a.txt?")
	var got run.Summary
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	if got.Status != "completed" || got.Answer != "it says alpha" || got.Steps != 2 || len(got.ToolCalls) != 1 ||
		!strings.Contains(got.ToolCalls[0].Content, "alpha") || got.Usage.TotalTokens != 240 || got.ExitCode != 0 {
		t.Errorf("--json = %+v", got)
	}
}

// raceEnabled is set under the race detector (race_test.go).
var raceEnabled bool

// oneShot is the command line of the bench's one-shot answer.
var oneShot = []string{"ask", "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "fake-model",
	"--yes", "--quiet", "--workdir", ".", "say hello"}

// parseAsRun builds the app as runCLI does and runs it on args with an
// action that reads the typed flags, as every run does first.
func parseAsRun(args []string) error {
	stdio := &IO{Getenv: func(string) string { return "" }, Out: io.Discard, Err: io.Discard}
	line, err := readArgs(mainSpec(stdio), args[1:])
	if err != nil {
		return err
	}
	useConfigFile(line, stdio)
	stdio.typed = line.typed()
	app := appWith(stdio, nil)
	app.Action = func(c *cli.Context) error { _, err := flagSettings(c, stdio); return err }
	return app.RunContext(context.Background(), line.argv(args[0]))
}

// Building the command tree and parsing a one-shot command line is paid
// by every answer. It took 7,400 allocations when urfave/cli's Names ran a
// regular expression about n² times per run, 1,920 when every subcommand
// was built for a run that names none, 1,380 when urfave/cli was given
// every run flag rather than those the line types; about 430 now. The
// budget catches a return of any, in allocations, not time.
func TestStartAllocations(t *testing.T) {
	budget := 700.0
	if raceEnabled {
		budget = 900 // the race detector moves more values to the heap
	}
	allocs := testing.AllocsPerRun(20, func() {
		if err := parseAsRun(oneShot); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.0f allocations, budget %.0f", allocs, budget)
	if allocs > budget {
		t.Errorf("building the tree and parsing a one-shot command line: %.0f allocations, budget %.0f", allocs, budget)
	}
}

// go test -run XXX -bench Start -benchmem ./cmd/ask/
func BenchmarkStartParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := parseAsRun(oneShot); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStartTree(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		stdio := &IO{Getenv: func(string) string { return "" }, Out: io.Discard, Err: io.Discard}
		_ = appWith(stdio, subcommands(stdio))
	}
}

// BenchmarkStartOneShot is a whole one-shot answer in process, against the
// fake provider: what a run allocates beyond the runtime and package inits.
func BenchmarkStartOneShot(b *testing.B) {
	b.ReportAllocs()
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o700); err != nil {
		b.Fatal(err)
	}
	var replies []fakeprovider.Reply
	for i := 0; i < b.N+1; i++ {
		replies = append(replies, fakeprovider.Reply{Text: "Hello."})
	}
	srv := fakeprovider.Start(replies...)
	defer srv.Close()
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "OPENAI_API_KEY": "fake-bench-not-a-key-000000"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		stdio := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(k string) string { return env[k] },
			Environ: func() []string { return nil }, HTTP: &http.Client{Timeout: 30 * time.Second}, Now: time.Now, Wd: dir, Net: providers.DefaultNet, sandboxCheck: noSandbox}
		code := runCLI(context.Background(), []string{"ask", "--provider", "openai", "--base-url", srv.URL, "--model", "fake-model", "--yes", "--quiet", "--workdir", dir, "say hello"}, stdio)
		if code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// A traced run's spans are at the collector when ask returns: the exit
// flushes them, well before the exporter's own schedule would.
func TestTracesAreFlushedAtExit(t *testing.T) {
	t.Parallel()
	rcv := tracetest.Start(t)
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "42"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}}, "what is six times seven?")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "42" {
		t.Fatalf("code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if got := tracetest.Named(rcv.Spans(), "invoke_agent ask"); len(got) != 1 {
		t.Errorf("%d invoke_agent spans at the collector when ask returned, want 1", len(got))
	}
}

// A collector that accepts the connection and never answers neither fails
// the run nor holds its exit longer than trace.FlushTimeout (the bound is
// generous: the run itself is in it).
func TestTracesCollectorDownDoesNotHoldTheExit(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "42"})
	defer srv.Close()
	start := time.Now()
	r := runAsk(t, askEnv{server: srv, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + ln.Addr().String()}}, "q")
	took := time.Since(start)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "42" || r.stderr != "" {
		t.Fatalf("code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if bound := trace.FlushTimeout + 3*time.Second; took > bound {
		t.Errorf("ask took %s with the collector down; the flush may add %s (bound %s)", took, trace.FlushTimeout, bound)
	}
	t.Logf("ask took %s with a collector that never answers (flush bound %s)", took, trace.FlushTimeout)
}

// A batch is one trace: a span for the batch, one for each task under it,
// and each task's run under its task.
func TestBatchIsOneTraceAtTheCollector(t *testing.T) {
	t.Parallel()
	rcv := tracetest.Start(t)
	m := startEcho(t, 0)
	env := map[string]string{"XDG_STATE_HOME": t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}
	if r := runAsk(t, askEnv{server: m.Server, env: env}, "batch", "-j", "2", taskFile(t, 3)); r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	spans := rcv.Spans()
	batches, tasks, runs := tracetest.Named(spans, "ask batch"), tracetest.Named(spans, "ask batch task"), tracetest.Named(spans, "invoke_agent ask")
	batches = slices.DeleteFunc(batches, func(s tracetest.Span) bool { return s.Name != "ask batch" })
	if len(batches) != 1 || len(tasks) != 3 || len(runs) != 3 {
		t.Fatalf("%d batch, %d task and %d run spans, want 1, 3 and 3", len(batches), len(tasks), len(runs))
	}
	taskIDs := map[string]bool{}
	for _, s := range tasks {
		if s.TraceID != batches[0].TraceID || s.ParentID != batches[0].SpanID {
			t.Errorf("task span %s is not under the batch's", s.SpanID)
		}
		taskIDs[s.SpanID] = true
	}
	for _, s := range runs {
		if s.TraceID != batches[0].TraceID || !taskIDs[s.ParentID] {
			t.Errorf("run span %s is not under a task's span", s.SpanID)
		}
	}
}

// Package initialisation runs in every process, before ask reads its first
// flag, so it is paid by every question, script line and CI step. The
// budgets are in bytes and allocations, which do not depend on the machine
// or its load. The per-package budget keeps each init under 0.5 ms on the
// bench machine: the costliest one it lets through, blackfriday (urfave/cli's
// markdown package, in the build without -tags urfave_cli_no_docs), is
// 214 KB and 762 allocations in 0.45 ms. The validator ask used before
// github.com/google/jsonschema-go, santhosh-tekuri/jsonschema/v6, compiled
// its meta-schemas at init: 1.7 MB and 21,000 allocations in 3.5 ms.
const (
	initMaxBytesPerPackage  = 256 << 10
	initMaxAllocsPerPackage = 800
	initMaxBytesTotal       = 640 << 10
	initMaxAllocsTotal      = 3000
)

// initLine is one line of GODEBUG=inittrace=1:
// "init net/http @6.8 ms, 0.033 ms clock, 4712 bytes, 49 allocs".
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

type initCost struct {
	pkg           string
	bytes, allocs int64
}

// parseInitTrace reads the init lines of GODEBUG=inittrace=1 output and
// ignores every other line.
func parseInitTrace(out []byte) ([]initCost, error) {
	var costs []initCost
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "init ") {
			continue
		}
		m := initLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("unexpected inittrace line %q", line)
		}
		b, _ := strconv.ParseInt(m[2], 10, 64)
		a, _ := strconv.ParseInt(m[3], 10, 64)
		costs = append(costs, initCost{pkg: m[1], bytes: b, allocs: a})
	}
	return costs, nil
}

func TestParseInitTrace(t *testing.T) {
	t.Parallel()
	out := "ask version dev\n" +
		"init internal/bytealg @0.008 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/example/validator @3.1 ms, 3.6 ms clock, 1700688 bytes, 21279 allocs\n"
	got, err := parseInitTrace([]byte(out))
	want := []initCost{{"internal/bytealg", 0, 0}, {"github.com/example/validator", 1700688, 21279}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("parseInitTrace: %v, %v; want %v", got, err, want)
	}
	if _, err := parseInitTrace([]byte("init x @1 ms, 2 ms clock, many bytes, 3 allocs\n")); err == nil {
		t.Error("parseInitTrace accepted a line it cannot read")
	}
}

// TestInitBudget builds ask as the README builds it, runs `ask --version`
// with GODEBUG=inittrace=1 and checks every package's init, and all of them
// together, against the budgets above. It counts; it does not time.
func TestInitBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it builds ask and runs it with inittrace")
	}
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go not found: %v", err)
		}
		t.Skipf("go not found: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "ask")
	// The README's build (CGO_ENABLED=0, no tags), whose packages scripts/test.sh
	// has just compiled: this link reuses them.
	build := exec.Command(goBin, "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), "ask version ") {
		t.Fatalf("ask --version: %v, stdout %q, stderr:\n%s", err, out, stderr.Bytes())
	}
	// main answers `ask --version` alone without the command tree; with
	// another flag before it, the tree answers: the two must agree.
	if tree, err := exec.Command(bin, "--quiet", "--version").Output(); err != nil || string(tree) != string(out) {
		t.Errorf("ask --quiet --version: %v, stdout %q; ask --version printed %q", err, tree, out)
	}
	// Nor does it die of SIGPIPE when stdout is closed: it exits 141, as
	// DESIGN §7 has it, quietly.
	for _, args := range [][]string{{"--version"}, {"--quiet", "--version"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		cmd := exec.Command(bin, args...)
		cmd.Stdout = w
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err = cmd.Run()
		w.Close()
		if cmd.ProcessState.ExitCode() != 141 || errOut.Len() > 0 {
			t.Errorf("ask %s into a closed pipe: %v, stderr %q; want exit 141 and nothing said", strings.Join(args, " "), err, errOut.String())
		}
	}
	costs, err := parseInitTrace(stderr.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var total initCost
	seen := false
	for _, c := range costs {
		total.bytes += c.bytes
		total.allocs += c.allocs
		if c.pkg == "github.com/google/jsonschema-go/jsonschema" {
			seen = true
		}
		if c.bytes > initMaxBytesPerPackage || c.allocs > initMaxAllocsPerPackage {
			t.Errorf("init of %s: %d bytes and %d allocations; each package's init may take %d bytes and %d allocations",
				c.pkg, c.bytes, c.allocs, initMaxBytesPerPackage, initMaxAllocsPerPackage)
		}
	}
	if total.bytes > initMaxBytesTotal || total.allocs > initMaxAllocsTotal {
		t.Errorf("all %d inits: %d bytes and %d allocations; together they may take %d bytes and %d allocations",
			len(costs), total.bytes, total.allocs, initMaxBytesTotal, initMaxAllocsTotal)
	}
	// The trace lists a package only when it has work to do at init; the
	// validator has some (its tables of the Schema type's fields), so its
	// absence means the trace was not read.
	if !seen {
		t.Errorf("the trace has no init of github.com/google/jsonschema-go/jsonschema:\n%s", stderr.Bytes())
	}
	t.Logf("%d inits: %d bytes, %d allocations", len(costs), total.bytes, total.allocs)
}
