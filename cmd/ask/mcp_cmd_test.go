package main

import (
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
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
)

// The MCP integration tests run the reference npm servers, installed by
// scripts/test.sh (`npm ci --prefix testdata/mcp`). Without them the tests
// skip, unless ASK_REQUIRE_MCP=1 (set by scripts/test.sh, as in CI) makes
// that a failure. Under -short they skip: Node takes a while to start.

// mcpServerBin returns the path of an npm MCP server's executable.
func mcpServerBin(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("slow under -short: the reference MCP servers start under Node")
	}
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

// startRemoteEverything starts the reference server-everything in its
// streamableHttp or sse mode, bound to loopback by testdata/mcp/loopback.cjs,
// and returns its base URL ("http://127.0.0.1:PORT"). It is stopped, with
// its process group, when the test ends.
func startRemoteEverything(t *testing.T, mode string) string {
	t.Helper()
	mcpServerBin(t, "mcp-server-everything") // skips, or fails, without the npm servers
	root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mcp"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	portFile := filepath.Join(t.TempDir(), "port")
	cmd := exec.Command(node, "--require", filepath.Join(root, "loopback.cjs"),
		filepath.Join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), mode)
	cmd.Env = append(os.Environ(), "PORT=0", "ASK_TEST_PORT_FILE="+portFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	// Waiting for the server to listen is not an assertion on time: the
	// bound only keeps a broken start from hanging the test.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if b, err := os.ReadFile(portFile); err == nil {
			return "http://127.0.0.1:" + strings.TrimSpace(string(b))
		}
		select {
		case <-exited:
			t.Fatalf("server-everything %s exited: %s", mode, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("server-everything %s did not listen: %s", mode, stderr.String())
	return ""
}

// bearerProxy forwards to target only the requests that carry
// "Authorization: Bearer token"; the others get 401.
func bearerProxy(t *testing.T, target, token string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1 // SSE streams pass at once
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "missing or wrong token", http.StatusUnauthorized)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// The config file's mcpServers, pasted in Cursor's shape (url, headers with
// ${env:NAME}), are listed with their tools; a server that fails is listed
// with its error and the others still are.
func TestMCPListConfigServers(t *testing.T) {
	const token = "config-mcp-token-not-real-4242"
	endpoint := bearerProxy(t, startRemoteEverything(t, "streamableHttp"), token) + "/mcp"
	cfg := filepath.Join(t.TempDir(), "config.json")
	data := `{
  "mcpServers": {
    "everything": {"url": "` + endpoint + `", "headers": {"Authorization": "Bearer ${env:EVERYTHING_TOKEN}"}},
    "wrong-token": {"type": "streamable-http", "url": "` + endpoint + `", "headers": {"Authorization": "Bearer ${OTHER_TOKEN}"}},
    "off": {"command": "ask-no-such-mcp-server", "disabled": true}
  }
}`
	if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ASK_CONFIG": cfg, "EVERYTHING_TOKEN": token, "OTHER_TOKEN": "not-" + token}
	r := runAsk(t, askEnv{env: env}, "mcp", "list", "--tools", "--json")
	if r.code != exitAuth {
		t.Errorf("exit %d, want 4 (one server refused its token); stderr %s", r.code, r.stderr)
	}
	var entries []run.MCPEntry
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		t.Fatalf("stdout %q: %v", r.stdout, err)
	}
	if len(entries) != 3 {
		t.Fatalf("entries %+v", entries)
	}
	byName := map[string]run.MCPEntry{}
	for _, e := range entries {
		byName[e.Name] = e
	}
	ev := byName["everything"]
	if ev.Transport != "http+sse" || ev.Error != "" || len(ev.Tools) < 10 || strings.Join(ev.Headers, ",") != "Authorization" {
		t.Errorf("everything: %+v", ev)
	}
	var echo bool
	for _, tool := range ev.Tools {
		echo = echo || tool.Name == "echo" && tool.Declared == "everything__echo"
	}
	if !echo {
		t.Errorf("everything's tools lack echo: %+v", ev.Tools)
	}
	if w := byName["wrong-token"]; w.Transport != "http" || !strings.Contains(w.Error, "refused with HTTP 401") {
		t.Errorf("wrong-token: %+v", w)
	}
	if off := byName["off"]; !off.Disabled || off.Error != "" || off.Tools != nil {
		t.Errorf("off: %+v", off)
	}
	if strings.Contains(r.stdout+r.stderr, token) {
		t.Error("the listing shows a token")
	}
}

// inProcessMCP serves an SDK server with a read-only echo tool over
// streamable HTTP on loopback, counting the requests it gets, so that the
// trust rules are tested without Node.
func inProcessMCP(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "ask-cmd-test", Version: "1"}, nil)
	type args struct {
		Message string `json:"message"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the message", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + a.Message}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	var hits atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", &hits
}

// A URL that a transcript names is connected to by `ask replay` only
// with --yes. (That -c goes on without it is internal/run's
// TestMCPRemoteFromTranscriptIsGated.)
func TestMCPRemoteReplayNeedsYes(t *testing.T) {
	t.Parallel()
	endpoint, hits := inProcessMCP(t)
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("echo", "local__echo", `{"message":"hi"}`)}},
		fakeprovider.Reply{Text: "echoed"})
	defer srv.Close()
	e, _ := conversationEnv(t, srv)
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	if r := runAsk(t, e, "--mcp", endpoint, "--transcript", transcript, "echo"); r.code != exitOK || r.stdout != "echoed\n" {
		t.Fatalf("first run: exit %d, stdout %q; stderr %s", r.code, r.stdout, r.stderr)
	}
	before := hits.Load()
	r := runAsk(t, askEnv{wd: e.wd}, "replay", transcript)
	if r.code != exitUsage || !strings.Contains(r.stderr, "--mcp "+endpoint) || hits.Load() != before {
		t.Errorf("replay without --yes: exit %d, stderr %s", r.code, r.stderr)
	}
	r = runAsk(t, askEnv{wd: e.wd}, "replay", "--check", "--yes", transcript)
	if r.code != exitOK || r.stdout != "echoed\n" || hits.Load() == before {
		t.Errorf("replay --yes: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
}

// ask mcp list without --tools starts nothing and shows no value of env or
// headers; a broken block is a usage error at its line and column.
func TestMCPListWithoutTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"mcpServers": {
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_FILE_PATH": "/secret/path.jsonl"}},
  "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer literal-secret-in-config"}, "disabled": true}
}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runAsk(t, askEnv{env: map[string]string{"ASK_CONFIG": good}}, "mcp", "list", "--mcp", "./weather --flag")
	want := "weather\tstdio\t./weather --flag\t(flag --mcp)\n" +
		"memory\tstdio\tnpx -y @modelcontextprotocol/server-memory\t(env MEMORY_FILE_PATH; config " + good + ")\n" +
		"remote\thttp+sse\thttps://mcp.example.com/mcp\t(disabled; headers Authorization; config " + good + ")\n"
	if r.code != exitOK || r.stdout != want {
		t.Errorf("exit %d\nstdout %q\nwant   %q\nstderr %s", r.code, r.stdout, want, r.stderr)
	}
	if strings.Contains(r.stdout, "/secret/path") || strings.Contains(r.stdout, "literal-secret") {
		t.Error("a value of env or headers is shown")
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\"mcpServers\": {\n  \"x\": {\n    \"command\": \"srv\",\n    \"url\": \"https://e.com\"\n  }\n}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runAsk(t, askEnv{env: map[string]string{"ASK_CONFIG": bad}}, "mcp", "list")
	if r.code != exitUsage || !strings.Contains(r.stderr, bad+":4:5: mcpServers.x.url: a server has a command") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// A URL with a password is refused before anything is sent, and the
// password is not repeated.
func TestMCPRemoteURLWithPassword(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "never asked"})
	defer srv.Close()
	for _, args := range [][]string{{"--mcp", "https://me:hunter2@mcp.example.com/mcp", "hi"}, {"mcp", "list", "--mcp", "https://me:hunter2@mcp.example.com/mcp"}} {
		r := runAsk(t, askEnv{server: srv}, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "the URL holds a password") || strings.Contains(r.stderr+r.stdout, "hunter2") {
			t.Errorf("ask %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Error("the model was asked")
	}
}
