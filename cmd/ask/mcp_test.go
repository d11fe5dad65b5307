package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/sandbox/sandboxtest"
)

// The MCP integration tests run the reference npm servers, installed by
// scripts/test.sh (`npm ci --prefix testdata/mcp`). Without them the tests
// skip, unless ASK_REQUIRE_MCP=1 (set by scripts/test.sh, as in CI) makes
// that a failure.

// mcpServerBin returns the path of an npm MCP server's executable.
func mcpServerBin(t *testing.T, name string) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mcp", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("%s is not installed: run `npm ci --prefix testdata/mcp` (needs Node 20+)", bin)
		if os.Getenv("ASK_REQUIRE_MCP") == "1" {
			t.Fatal(msg + "; ASK_REQUIRE_MCP=1 makes this a failure")
		}
		t.Skip(msg)
	}
	return bin
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

func decodeFinal(t *testing.T, r askResult) run.Summary {
	t.Helper()
	var got run.Summary
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not the final JSON (%v): %q; stderr %s", err, r.stdout, r.stderr)
	}
	return got
}

func callsByID(calls []loop.Call) map[string]loop.Call {
	out := map[string]loop.Call{}
	for _, c := range calls {
		out[c.ID] = c
	}
	return out
}

func TestMCPEverythingThroughTheLoop(t *testing.T) {
	bin := mcpServerBin(t, "mcp-server-everything")
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

	r := runAsk(t, askEnv{server: srv}, "--json", "--mcp", marker+" "+bin, "use the tools")
	if r.code != exitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	got := decodeFinal(t, r)
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
	bin := mcpServerBin(t, "mcp-server-filesystem")
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

	r := runAsk(t, askEnv{server: srv, wd: dir, sandbox: sandbox.Check}, "--safe", "--json", "--mcp", fmt.Sprintf("%s %s '%s'", marker, bin, dir), "read hello.txt")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr %s\nstdout %s", r.code, r.stderr, r.stdout)
	}
	got := decodeFinal(t, r)
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
	bin := mcpServerBin(t, "mcp-server-everything")
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("a", "everything__toggle-simulated-logging", `{}`)}},
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("b", "everything__toggle-simulated-logging", `{}`)}},
		fakeprovider.Reply{Text: "toggled twice"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv}, "--json", "--allow-tool", "everything__toggle-simulated-logging", "--mcp", bin, "toggle twice")
	if r.code != exitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	calls := callsByID(decodeFinal(t, r).ToolCalls)
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
		{"not found", "ask-no-such-mcp-server --port 1", exitFailure,
			[]string{`ask: MCP server "ask-no-such-mcp-server --port 1": cannot start ask-no-such-mcp-server:`, "not found"}},
		{"exits at once", `sh -c 'echo "fatal: no config" >&2; exit 3'`, exitFailure,
			[]string{"the MCP handshake failed: it exited (exit status 3) before answering (stderr: fatal: no config)"}},
		{"unbalanced quote", "server 'oops", exitUsage, []string{`ask: --mcp "server 'oops": unterminated ' quote`}},
		{"empty", " ", exitUsage, []string{`ask: --mcp "`, `": empty command`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "never asked"})
			defer srv.Close()
			r := runAsk(t, askEnv{server: srv}, "--mcp", tt.mcp, "hi")
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
			if r.stdout != "" || len(srv.Requests()) != 0 {
				t.Errorf("the run went on: stdout %q, %d requests", r.stdout, len(srv.Requests()))
			}
		})
	}
}

// A failing server stops the ones already started.
func TestMCPOneServerFailsOthersStop(t *testing.T) {
	t.Parallel()
	bin := mcpServerBin(t, "mcp-server-everything")
	marker := fmt.Sprintf("ASK_TEST_RUN=failing-%d", time.Now().UnixNano())
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "never asked"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv}, "--mcp", marker+" "+bin, "--mcp", "ask-no-such-mcp-server", "hi")
	if r.code != exitFailure || !strings.Contains(r.stderr, `"ask-no-such-mcp-server"`) {
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
	r := runAsk(t, askEnv{server: srv, wd: dir}, "--json", "--tools-file", "tools.json", "go")
	if r.code != exitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	calls := callsByID(decodeFinal(t, r).ToolCalls)
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
			r := runAsk(t, askEnv{server: srv, wd: dir}, "--tools-file", tt.file, "hi")
			if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) || len(srv.Requests()) != 0 {
				t.Errorf("exit %d, stderr %q, %d requests; want exit %d and %q", r.code, r.stderr, len(srv.Requests()), exitUsage, tt.want)
			}
		})
	}
}
