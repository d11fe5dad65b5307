package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/tools"
)

func startTest(t *testing.T, ctx context.Context, opts Options, commands ...string) *Servers {
	t.Helper()
	if opts.Env == nil {
		opts.Env = tools.ChildEnv(os.Environ())
	}
	s, err := Start(ctx, commandServers(opts.Sandbox != nil, commands...), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// commandServers are --mcp values, started in the sandbox when asked.
func commandServers(sandboxed bool, commands ...string) []Server {
	var out []Server
	for _, c := range commands {
		out = append(out, Server{Command: c, Sandbox: sandboxed})
	}
	return out
}

func toolByName(t *testing.T, s *Servers, name string) tools.Tool {
	t.Helper()
	for _, tool := range s.Tools() {
		if tool.Info().Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func call(t *testing.T, tool tools.Tool, args string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return tool.Run(ctx, json.RawMessage(args))
}

func TestMCPListsEveryPage(t *testing.T) {
	s := startTest(t, context.Background(), Options{}, serverCommand("tools"))
	var names []string
	for _, tool := range s.Tools() {
		names = append(names, tool.Info().Name)
	}
	// The server is the test binary, "mcp.test": named after the binary.
	// The Go SDK's server lists its tools sorted by name.
	want := []string{"test__echo", "test__env", "test__exit", "test__fail",
		fit("test__"+strings.Repeat("long_", 14)+"end", strings.Repeat("long_", 14)+"end"),
		"test__mixed", "test__read_only", "test__sleep", "test__spawn", "test__structured", "test__tuple", "test__weird_name_with_spaces"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("tools =\n%v\nwant (6 pages of 2)\n%v", names, want)
	}
	// Every tool fits a registry: valid names, unique, compilable schemas.
	r, err := tools.NewRegistry(s.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if len(n) > 64 {
			t.Errorf("%s is longer than 64", n)
		}
	}
	if got, isErr := r.Call(context.Background(), "test__echo", `{"message":"via registry"}`); isErr || got != "echo: via registry" {
		t.Errorf("registry call = %q, error %v", got, isErr)
	}
}

func TestMCPToolInfo(t *testing.T) {
	s := startTest(t, context.Background(), Options{}, serverCommand("tools"))
	echo := toolByName(t, s, "test__echo").Info()
	if echo.Risk != tools.Exec || !echo.RequiresApproval || echo.Description != "Echo the message" {
		t.Errorf("echo info = %+v; want exec, approval, the server's description", echo)
	}
	if got, want := string(echo.Parameters), `{"additionalProperties":false,"properties":{"message":{"type":"string"}},"required":["message"],"type":"object"}`; got != want {
		t.Errorf("echo parameters = %s, want %s ($schema and $comment dropped)", got, want)
	}
	ro := toolByName(t, s, "test__read_only").Info()
	if ro.Risk != tools.Read || ro.RequiresApproval {
		t.Errorf("readOnlyHint tool = %+v; want read without approval", ro)
	}
	if p := string(toolByName(t, s, "test__fail").Info().Parameters); p != `{"properties":{},"type":"object"}` {
		t.Errorf("parameters of a tool without properties = %s", p)
	}
	tuple := toolByName(t, s, "test__tuple").Info()
	if string(tuple.Parameters) != emptyObject || !strings.Contains(tuple.Description, "not valid JSON Schema") {
		t.Errorf("uncompilable schema: parameters %s, description %q", tuple.Parameters, tuple.Description)
	}
	if got, err := call(t, toolByName(t, s, "test__tuple"), `{"pair":["a",1]}`); err != nil || got != "pair ok" {
		t.Errorf("tuple call = %q, %v", got, err)
	}
}

func TestMCPCalls(t *testing.T) {
	t.Setenv("ASK_TEST_SECRET", "hunter2")
	dir := t.TempDir()
	s := startTest(t, context.Background(), Options{Dir: dir}, serverCommand("tools", "ASK_MCP_EXTRA='two words'"))
	tests := []struct {
		tool, args string
		want       string
		wantErr    bool
	}{
		{"test__echo", `{"message":"hi"}`, "echo: hi", false},
		{"test__echo", ` {"message":"spaces"} `, "echo: spaces", false},
		{"test__read_only", ``, "looked", false},
		{"test__fail", `{}`, "disk on fire", true},
		{"test__mixed", `{}`, "here you go\n[image image/png, 1.2 kB]\n[resource link \"one\": demo://r/1 (text/plain)]\n" +
			"[resource demo://r/2]\ninline text\n[resource demo://r/3, application/gzip, 5 B]", false},
		{"test__structured", `{}`, `{"temperature":21}`, false},
		{"test__weird_name_with_spaces", `{}`, "weird ran", false},
		{"test__env", `{}`, fmt.Sprintf("wd=%s\nASK_MCP_EXTRA=two words\nSECRET_SEEN=", dir), false},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			got, err := call(t, toolByName(t, s, tt.tool), tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v (result %q)", err, tt.wantErr, got)
			}
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("result =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestMCPServerDiesDuringCall(t *testing.T) {
	s := startTest(t, context.Background(), Options{}, serverCommand("tools"))
	_, err := call(t, toolByName(t, s, "test__exit"), `{}`)
	if err == nil || !strings.Contains(err.Error(), "test__exit: the MCP server test") {
		t.Fatalf("call to a dying server: %v", err)
	}
	// The next call fails at once instead of hanging.
	_, err = call(t, toolByName(t, s, "test__echo"), `{"message":"anyone?"}`)
	if err == nil {
		t.Fatal("a call to a dead server succeeded")
	}
}

func TestMCPCallCancelled(t *testing.T) {
	s := startTest(t, context.Background(), Options{}, serverCommand("tools"))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := toolByName(t, s, "test__sleep").Run(ctx, json.RawMessage(`{}`))
	if err == nil || !strings.Contains(err.Error(), "the call was cancelled") {
		t.Fatalf("cancelled call: %v", err)
	}
	// The server itself lives on: cancelling a call is not stopping the run.
	if got, err := call(t, toolByName(t, s, "test__echo"), `{"message":"still here"}`); err != nil || got != "echo: still here" {
		t.Errorf("after a cancelled call: %q, %v", got, err)
	}
}

func TestMCPStartFailures(t *testing.T) {
	tests := []struct {
		name    string
		command string
		timeout time.Duration
		want    []string
	}{
		{"not found", "ask-no-such-mcp-server --flag", 0, []string{`MCP server "ask-no-such-mcp-server --flag"`, "cannot start ask-no-such-mcp-server", "not found"}},
		{"exits at once", serverCommand("crash"), 0, []string{"the MCP handshake failed", "exit status 2", "stderr: fatal: config file /etc/nowhere.json not found"}},
		{"npx 404", serverCommand("npx404"), 0, []string{"exit status 1", "stderr: npm error code E404 | npm error 404 Not Found - GET https://registry.npmjs.org/@ask-cli%2fno-such-server - Not found | npm error 404  '@ask-cli/no-such-server@*' is not in this registry.)"}},
		{"never answers", serverCommand("silent"), time.Second, []string{"did not answer the MCP handshake within 1s"}},
		{"not an MCP server", "echo hello", 0, []string{`MCP server "echo hello"`, "the MCP handshake failed"}},
		{"unbalanced quote", "server 'oops", 0, []string{`MCP server "server 'oops"`, "unterminated ' quote"}},
		{"empty", "  ", 0, []string{"empty command"}},
	}
	notProgram := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notProgram, []byte("not a program\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests = append(tests, struct {
		name    string
		command string
		timeout time.Duration
		want    []string
	}{"not executable", notProgram, 0, []string{fmt.Sprintf("MCP server %q: cannot start %s", notProgram, notProgram), "permission denied"}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.timeout > 0 && testing.Short() {
				t.Skip("slow under -short: it waits out the handshake's timeout")
			}
			start := time.Now()
			_, err := Start(context.Background(), commandServers(false, tt.command), Options{Env: os.Environ(), StartTimeout: tt.timeout})
			if err == nil {
				t.Fatal("started")
			}
			if elapsed := time.Since(start); elapsed > 15*time.Second {
				t.Errorf("failing took %s", elapsed)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

// One failing server stops the others and names itself.
func TestMCPStartOneFails(t *testing.T) {
	good := serverCommand("tools")
	_, err := Start(context.Background(), commandServers(false, good, "ask-no-such-mcp-server", serverCommand("tools")), Options{Env: os.Environ()})
	if err == nil || !strings.Contains(err.Error(), `"ask-no-such-mcp-server"`) {
		t.Fatalf("error = %v", err)
	}
}

// Two servers of the same program get distinct prefixes, and names already
// taken are avoided.
func TestMCPTwoServers(t *testing.T) {
	s := startTest(t, context.Background(), Options{Reserved: []string{"test"}}, serverCommand("tools"), serverCommand("tools"))
	seen := map[string]bool{}
	for _, tool := range s.Tools() {
		seen[tool.Info().Name] = true
	}
	if !seen["test_2__echo"] || !seen["test_3__echo"] || len(seen) != 24 {
		t.Errorf("tools of two servers: %v", seen)
	}
}

// pidsOf calls the spawn tool: the server's pid and a grandchild's.
func pidsOf(t *testing.T, s *Servers) (server, grandchild int) {
	t.Helper()
	got, err := call(t, toolByName(t, s, "test__spawn"), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(got)
	server, _ = strconv.Atoi(f[0])
	grandchild, _ = strconv.Atoi(f[1])
	if server == 0 || grandchild == 0 {
		t.Fatalf("spawn returned %q", got)
	}
	return server, grandchild
}

func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: process %d still runs", what, pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

func TestMCPCloseStopsServersAndTheirChildren(t *testing.T) {
	s, err := Start(context.Background(), commandServers(false, serverCommand("tools"), serverCommand("tools")), Options{Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, prefix := range []string{"test", "test_2"} {
		for _, tool := range s.Tools() {
			if tool.Info().Name == prefix+"__spawn" {
				got, err := call(t, tool, `{}`)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range strings.Fields(got) {
					pid, _ := strconv.Atoi(f)
					pids = append(pids, pid)
				}
			}
		}
	}
	if len(pids) != 4 {
		t.Fatalf("pids %v", pids)
	}
	start := time.Now()
	s.Close()
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Close took %s", elapsed)
	}
	waitGone(t, "after Close", pids...)
	s.Close() // twice is fine
}

func TestMCPCancelStopsServers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := startTest(t, ctx, Options{}, serverCommand("tools"))
	server, grandchild := pidsOf(t, s)
	cancel() // Ctrl-C: no Close yet
	waitGone(t, "after cancel", server, grandchild)
	if _, err := call(t, toolByName(t, s, "test__echo"), `{"message":"x"}`); err == nil {
		t.Error("a call after cancellation succeeded")
	}
}

// A context cancelled during start is reported as the cancellation, so
// that the CLI exits as interrupted.
func TestMCPStartCancelled(t *testing.T) {
	cause := errors.New("interrupted by test")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(cause) })
	_, err := Start(ctx, commandServers(false, serverCommand("silent")), Options{Env: os.Environ()})
	if !errors.Is(err, cause) {
		t.Fatalf("error = %v, want the cancellation cause", err)
	}
}

// syncBuffer is a goroutine-safe strings.Builder.
type syncBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

func TestMCPStderrForwarded(t *testing.T) {
	var errb syncBuffer
	s := startTest(t, context.Background(), Options{Stderr: &errb}, serverCommand("noisy"))
	s.Close()
	if got := errb.String(); got != "mcp test: Test server running on stdio\n" {
		t.Errorf("forwarded stderr = %q", got)
	}
}

// A config file's server: argv as given, env values expanded from ask's
// environment, and the chosen name kept as the tools' prefix.
func TestMCPConfigStyleServer(t *testing.T) {
	t.Parallel()
	env := map[string]string{"EXTRA_SOURCE": "from-ask"}
	s, err := Start(context.Background(), []Server{{
		Name: "server-tools", Argv: []string{os.Args[0], "--test.run=^$"},
		Env: map[string]string{serverModeVar: "tools", "ASK_MCP_EXTRA": "v=${env:EXTRA_SOURCE}"},
	}}, Options{Env: tools.ChildEnv(os.Environ()), Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := call(t, toolByName(t, s, "server-tools__env"), `{}`)
	if err != nil || !strings.Contains(out, "ASK_MCP_EXTRA=v=from-ask\n") {
		t.Errorf("env = %q, %v", out, err)
	}

	// An unset variable stops the server before it starts, naming it.
	_, err = Start(context.Background(), []Server{{
		Argv: []string{os.Args[0]}, Env: map[string]string{"K": "${UNSET_VAR}"}, Origin: "MCP server x (config mcpServers)",
	}}, Options{Getenv: func(string) string { return "" }})
	if err == nil || err.Error() != "MCP server x (config mcpServers): env K: the environment variable UNSET_VAR is not set" {
		t.Errorf("err = %v", err)
	}
}

// A config entry's cwd (relative to the servers' directory) and
// disabledTools, as Roo Code writes them, are honoured.
func TestMCPServerDirAndDisabledTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), []Server{{Command: serverCommand("tools"), Dir: "sub", DisabledTools: []string{"echo", "fail"}}},
		Options{Dir: dir, Env: tools.ChildEnv(os.Environ())})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tool := range s.Tools() {
		if n := tool.Info().Name; n == "test__echo" || n == "test__fail" {
			t.Errorf("disabled tool %s is offered", n)
		}
	}
	out, err := call(t, toolByName(t, s, "test__env"), `{}`)
	if want := "wd=" + filepath.Join(dir, "sub"); err != nil || !strings.Contains(out, want) {
		t.Errorf("env = %q, %v; want %s", out, err, want)
	}
}

// A server that is up before the next one is added takes itself off the
// list while Start is still adding: the list is shared with the servers'
// goroutines (the race detector fails this without the lock in add).
func TestWaitListAddWhileOneIsDone(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var told [][]string
	w := newWaitList(func(names []string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, names)
	})
	w.add("first")
	up := make(chan struct{})
	go func() {
		w.done("first")
		close(up)
	}()
	w.add("second")
	<-up
	w.show()
	mu.Lock()
	defer mu.Unlock()
	if last := told[len(told)-1]; !slices.Equal(last, []string{"second"}) {
		t.Errorf("still waited for %q, want [second]", last)
	}
}
