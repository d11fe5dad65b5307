package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/runtest"
	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/sandbox/sandboxtest"
)

// A URL that a transcript names is gated as a command is: -c goes on
// without it unless the flag or a yes gives it again. (That replay
// connects only with --yes is cmd/ask's TestMCPRemoteReplayNeedsYes.)
func TestMCPRemoteFromTranscriptIsGated(t *testing.T) {
	t.Parallel()
	endpoint, hits := runtest.InProcessMCP(t)
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("echo", "local__echo", `{"message":"hi"}`)}},
		fakeprovider.Reply{Text: "echoed"},
		fakeprovider.Reply{Text: "again"})
	defer srv.Close()
	w := newWorld(t, srv)
	if r := w.ask("echo", "mcp", endpoint); r.code != fault.ExitOK || r.answer() != "echoed\n" {
		t.Fatalf("first run: exit %d, answer %q; stderr %s", r.code, r.answer(), r.stderr)
	}
	before := hits.Load()

	r := w.ask("again", "continue", true)
	if r.code != fault.ExitOK || !strings.Contains(r.stderr, "give --mcp "+endpoint) {
		t.Errorf("-c: exit %d, stderr %s", r.code, r.stderr)
	}
	if hits.Load() != before {
		t.Error("-c connected to the transcript's server without being told to")
	}
	if declared := declaredNames(srv.Requests()[2]); strings.Contains(declared, "local__") {
		t.Errorf("-c declared %s", declared)
	}
}

// Under --safe (no network) a remote server is not contacted at all (L4:
// its token would leave the machine): its tools are not offered, a call to
// one fails, and stderr says why. --allow-host naming it lets it be.
func TestMCPRemoteRefusedUnderSafe(t *testing.T) {
	t.Parallel()
	endpoint, hits := runtest.InProcessMCP(t)
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("echo", "local__echo", `{"message":"hi"}`)}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	r := newWorld(t, srv).ask("echo", "safe", true, "mcp", endpoint)
	if hits.Load() != 0 || !strings.Contains(r.stderr, "not contacted under --safe") {
		t.Fatalf("exit %d, %d requests to the server; stderr %s", r.code, hits.Load(), r.stderr)
	}
	if c := callsByID(r.summary().ToolCalls)["echo"]; !c.IsError || strings.Contains(c.Content, "echo: hi") {
		t.Errorf("call %+v", c)
	}
}

// A remote server that is gone when a tool is called does not stop the
// run: the call is an error result the model reads, and it answers.
func TestMCPRemoteServerGoneMidRun(t *testing.T) {
	t.Parallel()
	endpoint, _ := runtest.InProcessMCP(t)
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var gone atomic.Bool
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy.FlushInterval = -1
	front := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gone.Load() {
			// Hang up, as a server that has died does.
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front.Listener = l
	front.Start()
	defer front.Close()

	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("echo", "local__echo", `{"message":"hi"}`)}},
		fakeprovider.Reply{Text: "the server is gone"})
	defer srv.Close()
	// Once the model is asked, the MCP server is gone.
	provURL, _ := url.Parse(srv.URL)
	toProvider := httputil.NewSingleHostReverseProxy(provURL)
	toProvider.FlushInterval = -1
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gone.Store(true)
		toProvider.ServeHTTP(w, r)
	}))
	defer model.Close()
	w := newWorld(t, nil).with("ASK_PROVIDER", "openai", "ASK_BASE_URL", model.URL, "OPENAI_API_KEY", "fake-test-not-a-real-key-0000")
	r := w.ask("echo", "mcp", front.URL+target.Path)
	if r.code != fault.ExitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	got := r.summary()
	c := callsByID(got.ToolCalls)["echo"]
	if got.Answer != "the server is gone" || !c.IsError || !strings.Contains(c.Content, "local__echo: the MCP server local at "+front.URL+target.Path+" cannot be reached: ") {
		t.Errorf("answer %q, call %+v", got.Answer, c)
	}
}

func callsByID(calls []loop.Call) map[string]loop.Call {
	out := map[string]loop.Call{}
	for _, c := range calls {
		out[c.ID] = c
	}
	return out
}

// L5: a remote MCP server that echoes the token its header carried handed
// it to the model, the provider and the transcript. Header values as sent
// are scrubbed from every tool result, bare and as the Bearer credential.
func TestMCPEchoedTokenIsScrubbed(t *testing.T) {
	t.Parallel()
	s := sdk.NewServer(&sdk.Implementation{Name: "echo-auth", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "Say who the caller is", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			auth := ""
			if req.Extra != nil {
				auth = req.Extra.Header.Get("Authorization")
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you sent " + auth}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	remote := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	remote.Listener = l
	remote.Start()
	defer remote.Close()
	const token = "mcp-echoed-token-0123456789"
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("who", "local__whoami", `{}`)}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	r := newWorld(t, srv).with("MCP_TOKEN", token).ask("who am I", "mcp", remote.URL+"/mcp", "mcp-header", "Authorization: Bearer ${MCP_TOKEN}")
	if r.code != fault.ExitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	c := callsByID(r.summary().ToolCalls)["who"]
	if !strings.Contains(c.Content, "you sent") {
		t.Fatalf("the tool did not run: %+v", c)
	}
	out, _ := json.Marshal(r.summary())
	if bytes.Contains(out, []byte(token)) || bytes.Contains(r.transcript, []byte(token)) || bytes.Contains(srv.Requests()[len(srv.Requests())-1], []byte(token)) {
		t.Errorf("the echoed MCP token reached the model or the output: %s", c.Content)
	}
}

// processesWithEnv returns the pids of processes whose environment holds
// the entry marker, so that a test can tell which servers a run started.
func processesWithEnv(t *testing.T, marker string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to look for leftover processes: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or not ours
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if _, after, _ := strings.Cut(string(stat), ") "); strings.HasPrefix(after, "Z") {
			continue // a zombie has finished
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if kv == marker {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// assertNoProcesses fails when a process started with marker still runs.
func assertNoProcesses(t *testing.T, marker string) {
	t.Helper()
	// The scan must see a process that has the marker.
	probe := exec.Command("sleep", "30")
	probe.Env = append(os.Environ(), marker)
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	found := processesWithEnv(t, marker)
	probe.Process.Kill()
	probe.Wait()
	if len(found) != 1 || found[0] != probe.Process.Pid {
		t.Fatalf("the process scan found %v, want only the probe %d", found, probe.Process.Pid)
	}
	if left := processesWithEnv(t, marker); len(left) > 0 {
		t.Errorf("processes %v of the run are still running after it ended", left)
	}
}

func TestMCPEverythingThroughTheLoop(t *testing.T) {
	bin := runtest.MCPServerBin(t, "mcp-server-everything")
	marker := fmt.Sprintf("ASK_TEST_RUN=everything-%d", time.Now().UnixNano())
	t.Setenv("OPENAI_API_KEY_FOR_TEST_TOKEN", "must-not-reach-the-server") // ends in _TOKEN: dropped
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("echo", "everything__echo", `{"message":"hello from ask"}`),
			fakeprovider.Call("sum", "everything__get-sum", `{"a":2,"b":3}`),
			fakeprovider.Call("iserror", "everything__get-resource-reference", `{"resourceId":1.5}`),
			fakeprovider.Call("badargs", "everything__get-sum", `{"a":"two"}`),
			fakeprovider.Call("image", "everything__get-tiny-image", `{}`),
			fakeprovider.Call("env", "everything__get-env", `{}`),
			fakeprovider.Call("gated", "everything__toggle-simulated-logging", `{}`),
		}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()

	r := newWorld(t, srv).ask("use the tools", "mcp", marker+" "+bin)
	if r.code != fault.ExitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	got := r.summary()
	if got.Answer != "done" || got.Steps != 2 {
		t.Errorf("answer %q after %d steps", got.Answer, got.Steps)
	}
	calls := callsByID(got.ToolCalls)
	tests := []struct {
		id       string
		contains string
		isError  bool
	}{
		{"echo", "Echo: hello from ask", false},
		{"sum", "The sum of 2 and 3 is 5.", false},
		// The server's own isError result.
		{"iserror", "Invalid resourceId: 1.5. Must be a finite positive integer.", true},
		// Caught by ask's validation against the declared schema.
		{"badargs", "invalid arguments for everything__get-sum", true},
		{"image", "[image image/png, ", false},
		{"env", strings.Replace(marker, "=", `": "`, 1), false}, // a JSON object of the environment
		// Not read-only, so it needs approval, and there is no terminal.
		{"gated", "needs approval and there is no terminal", true},
	}
	for _, tt := range tests {
		c, ok := calls[tt.id]
		if !ok {
			t.Errorf("no result for call %s", tt.id)
			continue
		}
		if !strings.Contains(c.Content, tt.contains) || c.IsError != tt.isError {
			t.Errorf("call %s: is_error %v, content %q; want is_error %v and %q", tt.id, c.IsError, c.Content, tt.isError, tt.contains)
		}
	}
	if env := calls["env"].Content; strings.Contains(env, "must-not-reach-the-server") || strings.Contains(env, "fake-test-not-a-real-key") {
		t.Error("the server saw credentials")
	}
	if len(got.Denials) != 1 || got.Denials[0].Name != "everything__toggle-simulated-logging" {
		t.Errorf("denials %+v", got.Denials)
	}

	// What the model was offered: server__tool names, schemas without
	// "$schema", ask's built-ins first.
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	declared := declaredNames(reqs[0])
	if !strings.HasPrefix(declared, "read_file,") || !strings.Contains(declared, ",everything__echo,") || !strings.Contains(declared, ",everything__get-sum,") {
		t.Errorf("declared %s", declared)
	}
	echo := gjson.GetBytes(reqs[0], `tools.#(function.name=="everything__echo").function`)
	if echo.Get("description").String() != "Echoes back the input string" ||
		echo.Get("parameters.required").Raw != `["message"]` || echo.Get("parameters").Get(`\$schema`).Exists() {
		t.Errorf("everything__echo declared as %s", echo.Raw)
	}
	if strings.Contains(string(reqs[0]), "json-schema.org") {
		t.Error("a $schema reached the provider")
	}
	// The results went back to the model.
	results := gjson.GetBytes(reqs[1], `messages.#(role=="tool")#.content`).String()
	for _, want := range []string{"Echo: hello from ask", "The sum of 2 and 3 is 5.", "Invalid resourceId"} {
		if !strings.Contains(results, want) {
			t.Errorf("the second request's tool results lack %q", want)
		}
	}
	assertNoProcesses(t, marker)
}

// Under --safe the server runs in the read-only sandbox, as commands do:
// its tools run without asking, since nothing they do can last. A write
// meets the read-only view and the file stays untouched.
func TestMCPFilesystemUnderSafe(t *testing.T) {
	t.Parallel()
	sandboxtest.Require(t, sandbox.Policy{Level: sandbox.ReadOnly})
	bin := runtest.MCPServerBin(t, "mcp-server-filesystem")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello, filesystem\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("ASK_TEST_RUN=filesystem-%d", time.Now().UnixNano())
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("read", "filesystem__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "hello.txt"))),
			fakeprovider.Call("list", "filesystem__list_directory", fmt.Sprintf(`{"path":%q}`, dir)),
			fakeprovider.Call("outside", "filesystem__read_text_file", `{"path":"/etc/passwd"}`),
			fakeprovider.Call("missing", "filesystem__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "missing.txt"))),
			fakeprovider.Call("write", "filesystem__write_file", fmt.Sprintf(`{"path":%q,"content":"pwned"}`, filepath.Join(dir, "hello.txt"))),
		}},
		fakeprovider.Reply{Text: "read it"})
	defer srv.Close()

	w := newWorld(t, srv)
	w.wd, w.sandbox = dir, sandbox.Check
	r := w.ask("read hello.txt", "safe", true, "mcp", fmt.Sprintf("%s %s '%s'", marker, bin, dir))
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr %s", r.code, r.stderr)
	}
	got := r.summary()
	calls := callsByID(got.ToolCalls)
	tests := []struct {
		id       string
		contains string
		isError  bool
	}{
		{"read", "hello, filesystem", false},
		{"list", "[DIR] sub", false},
		{"outside", "Access denied - path outside allowed directories", true},
		{"missing", "ENOENT", true},
		{"write", "EROFS: read-only file system", true},
	}
	for _, tt := range tests {
		c := calls[tt.id]
		if !strings.Contains(c.Content, tt.contains) || c.IsError != tt.isError {
			t.Errorf("call %s: is_error %v, content %q; want is_error %v and %q", tt.id, c.IsError, c.Content, tt.isError, tt.contains)
		}
	}
	if !strings.Contains(calls["list"].Content, "[FILE] hello.txt") {
		t.Errorf("listing %q", calls["list"].Content)
	}
	if len(got.Denials) != 0 {
		t.Errorf("denials %+v: a confined server's calls need no one's word", got.Denials)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "hello.txt")); string(b) != "hello, filesystem\n" {
		t.Errorf("hello.txt is now %q", b)
	}
	declared := declaredNames(srv.Requests()[0])
	if !strings.Contains(declared, "filesystem__read_text_file") || !strings.Contains(declared, "filesystem__list_directory") {
		t.Errorf("read-only tools missing under --safe: %s", declared)
	}
	assertNoProcesses(t, marker)
}

// Servers are started once per run, however many calls: two calls in two
// steps reach the same process.
func TestMCPServerStartedOncePerRun(t *testing.T) {
	t.Parallel()
	bin := runtest.MCPServerBin(t, "mcp-server-everything")
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("a", "everything__toggle-simulated-logging", `{}`)}},
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("b", "everything__toggle-simulated-logging", `{}`)}},
		fakeprovider.Reply{Text: "toggled twice"})
	defer srv.Close()
	r := newWorld(t, srv).ask("toggle twice", "allow-tool", "everything__toggle-simulated-logging", "mcp", bin)
	if r.code != fault.ExitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	calls := callsByID(r.summary().ToolCalls)
	// The server keeps the switch: on, then off.
	if !strings.Contains(calls["a"].Content, "Started") || !strings.Contains(calls["b"].Content, "Stopped") {
		t.Errorf("first toggle %q, second %q: not the same server", calls["a"].Content, calls["b"].Content)
	}
}

// A server that cannot start is a one-line error naming the command, before
// anything is sent to the model. These need no Node.
func TestMCPServerFailsToStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mcp      string
		wantCode int
		want     []string
	}{
		{"not found", "ask-no-such-mcp-server --port 1", fault.ExitFailure,
			[]string{`ask: MCP server "ask-no-such-mcp-server --port 1": cannot start ask-no-such-mcp-server:`, "not found"}},
		{"exits at once", `sh -c 'echo "fatal: no config" >&2; exit 3'`, fault.ExitFailure,
			[]string{"the MCP handshake failed: it exited (exit status 3) before answering (stderr: fatal: no config)"}},
		{"unbalanced quote", "server 'oops", fault.ExitUsage, []string{`ask: --mcp "server 'oops": unterminated ' quote`}},
		{"empty", " ", fault.ExitUsage, []string{`ask: --mcp server 1 is empty: give the command that starts it`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "never asked"})
			defer srv.Close()
			r := newWorld(t, srv).ask("hi", "mcp", tt.mcp)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr %q", r.code, tt.wantCode, r.stderr)
			}
			if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 {
				t.Errorf("stderr is %d lines: %q", n+1, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not contain %q", r.stderr, w)
				}
			}
			if r.answer() != "" || len(srv.Requests()) != 0 {
				t.Errorf("the run went on: answer %q, %d requests", r.answer(), len(srv.Requests()))
			}
		})
	}
}

// A failing server stops the ones already started.
func TestMCPOneServerFailsOthersStop(t *testing.T) {
	t.Parallel()
	bin := runtest.MCPServerBin(t, "mcp-server-everything")
	marker := fmt.Sprintf("ASK_TEST_RUN=failing-%d", time.Now().UnixNano())
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "never asked"})
	defer srv.Close()
	r := newWorld(t, srv).ask("hi", "mcp", marker+" "+bin, "mcp", "ask-no-such-mcp-server")
	if r.code != fault.ExitFailure || !strings.Contains(r.stderr, `"ask-no-such-mcp-server"`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	assertNoProcesses(t, marker)
}

func TestToolsFileThroughTheLoop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := `{"tools":[
	  {"name":"echo_args","description":"Print the arguments","command":"cat","risk":"read",
	   "parameters":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},
	  {"name":"deploy","description":"Deploy","command":"echo deployed > deployed.txt","risk":"exec"}]}`
	if err := os.WriteFile(filepath.Join(dir, "tools.json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("ok", "echo_args", `{"text":"hi"}`),
			fakeprovider.Call("bad", "echo_args", `{"text":5}`),
			fakeprovider.Call("deploy", "deploy", `{}`),
		}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	// Relative to the working directory, like every path ask is given.
	w := newWorld(t, srv)
	w.wd = dir
	r := w.ask("go", "tools-file", "tools.json")
	if r.code != fault.ExitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	calls := callsByID(r.summary().ToolCalls)
	if c := calls["ok"]; c.IsError || c.Content != "{\"text\":\"hi\"}\n" {
		t.Errorf("echo_args = %q (error %v)", c.Content, c.IsError)
	}
	if c := calls["bad"]; !c.IsError || !strings.Contains(c.Content, `at /properties/text: type: 5 has type "integer", want "string"`) {
		t.Errorf("bad arguments = %q (error %v)", c.Content, c.IsError)
	}
	// exec risk: needs approval by default, and nobody is there to give it.
	if c := calls["deploy"]; !c.IsError || !strings.Contains(c.Content, "needs approval") {
		t.Errorf("deploy = %q (error %v)", c.Content, c.IsError)
	}
	if _, err := os.Stat(filepath.Join(dir, "deployed.txt")); err == nil {
		t.Error("deploy ran without approval")
	}
	if d := declaredNames(srv.Requests()[0]); !strings.HasSuffix(d, ",shell,echo_args,deploy") {
		t.Errorf("declared %s", d)
	}
}

func TestToolsFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("typo.json", `{"tools":[{"name":"x","description":"d","comand":"true"}]}`)
	write("builtin.json", `{"tools":[{"name":"read_file","description":"d","command":"true"}]}`)
	tests := []struct{ file, want string }{
		{"typo.json", `ask: --tools-file: tools file ` + filepath.Join(dir, "typo.json") + `: tool #1 "x": unknown field "comand"`},
		{"builtin.json", `tool #1 "read_file": the name is already used by a built-in tool`},
		{"missing.json", "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "never asked"})
			defer srv.Close()
			w := newWorld(t, srv)
			w.wd = dir
			r := w.ask("hi", "tools-file", tt.file)
			if r.code != fault.ExitUsage || !strings.Contains(r.stderr, tt.want) || len(srv.Requests()) != 0 {
				t.Errorf("exit %d, stderr %q, %d requests; want exit %d and %q", r.code, r.stderr, len(srv.Requests()), fault.ExitUsage, tt.want)
			}
		})
	}
}

// A run uses a tool of the reference server over streamable HTTP and one
// over SSE (reached by falling back from streamable HTTP at the same URL).
func TestMCPRemoteEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it starts two reference servers under Node (about 1 s)")
	}
	streamable := runtest.StartRemoteEverything(t, "streamableHttp") + "/mcp"
	sse := runtest.StartRemoteEverything(t, "sse") + "/sse"
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("echo", "local__echo", `{"message":"over streamable HTTP"}`),
			fakeprovider.Call("sum", "local_2__get-sum", `{"a":2,"b":3}`),
		}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()

	r := newWorld(t, srv).ask("use the tools", "mcp", streamable, "mcp", sse)
	if r.code != fault.ExitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	got := r.summary()
	calls := callsByID(got.ToolCalls)
	if c := calls["echo"]; c.IsError || !strings.Contains(c.Content, "Echo: over streamable HTTP") {
		t.Errorf("streamable HTTP call: %+v", c)
	}
	if c := calls["sum"]; c.IsError || !strings.Contains(c.Content, "The sum of 2 and 3 is 5.") {
		t.Errorf("SSE call: %+v", c)
	}
	declared := declaredNames(srv.Requests()[0])
	if !strings.Contains(declared, ",local__echo,") || !strings.Contains(declared, ",local_2__get-sum,") {
		t.Errorf("declared %s", declared)
	}
}

// Behind a proxy that wants a bearer token, the server refuses a run
// without it (exit 4, one line) and serves one whose --mcp-header names the
// variable holding it; the token is in no output and no transcript.
func TestMCPRemoteBearerToken(t *testing.T) {
	const token = "remote-mcp-token-not-real-4242"
	endpoint := runtest.BearerProxy(t, runtest.StartRemoteEverything(t, "streamableHttp"), token) + "/mcp"

	srv := fakeprovider.Start(fakeprovider.Reply{Text: "never asked"})
	defer srv.Close()
	r := newWorld(t, srv).with("ASK_TEST_MCP_TOKEN", token).ask("hello", "mcp", endpoint)
	want := `ask: MCP server "` + endpoint + `": refused with HTTP 401 Unauthorized: the server wants credentials;`
	if r.code != fault.ExitAuth || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("without the token: exit %d, stderr %q", r.code, r.stderr)
	}
	if len(srv.Requests()) != 0 {
		t.Error("the model was asked although the server refused")
	}

	// A literal credential on the command line is refused before anything.
	r = newWorld(t, srv).with("ASK_TEST_MCP_TOKEN", token).ask("hello", "mcp", endpoint, "mcp-header", "Authorization: Bearer "+token)
	if r.code != fault.ExitUsage || strings.Contains(r.stderr, token) || !strings.Contains(r.stderr, "${NAME}") {
		t.Errorf("a literal token: exit %d, stderr %q", r.code, r.stderr)
	}

	srv2 := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("echo", "local__echo", `{"message":"with the token"}`)}},
		fakeprovider.Reply{Text: "done"})
	defer srv2.Close()
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	w := newWorld(t, srv2).with("ASK_TEST_MCP_TOKEN", token)
	r = w.ask("hello", "transcript", transcript, "mcp", endpoint, "mcp-header", "Authorization: Bearer ${ASK_TEST_MCP_TOKEN}")
	if r.code != fault.ExitOK {
		t.Fatalf("with the token: exit %d; stderr %s", r.code, r.stderr)
	}
	if c := callsByID(r.summary().ToolCalls)["echo"]; c.IsError || !strings.Contains(c.Content, "Echo: with the token") {
		t.Errorf("call: %+v", c)
	}
	data, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	summary, _ := json.Marshal(r.summary())
	for what, s := range map[string]string{"stdout": string(summary), "stderr": r.stderr, "the transcript": string(data)} {
		if strings.Contains(s, token) {
			t.Errorf("%s holds the token", what)
		}
	}
	if !strings.Contains(string(data), endpoint) {
		t.Error("the transcript does not record the server's URL, which -c and replay need")
	}

	// Replay connects again, with the header given again.
	offline := &world{t: t, wd: w.wd, vars: map[string]string{"ASK_TEST_MCP_TOKEN": token}}
	yes := Given(true, "flag --yes")
	if r := offline.replay(transcript, ReplayOptions{Yes: yes}); r.code != fault.ExitAuth {
		t.Errorf("replay without --mcp-header: exit %d, error %v", r.code, r.err)
	}
	r = offline.replay(transcript, ReplayOptions{Yes: yes, MCPHeaders: Given([]string{"Authorization: Bearer ${ASK_TEST_MCP_TOKEN}"}, "flag --mcp-header")})
	if r.code != fault.ExitOK || r.answer() != "done\n" || r.diffs != "" {
		t.Errorf("replay with --mcp-header: exit %d, answer %q, stderr %s\n%s", r.code, r.answer(), r.stderr, r.diffs)
	}
}
