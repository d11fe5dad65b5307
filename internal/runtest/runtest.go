// Package runtest holds what the tests of a run share, in cmd/ask and
// internal/run alike: reading stderr and transcripts, waiting for a
// command's process to be gone, the config and tools files, and the MCP
// servers the tests start (the npm reference servers, an in-process one).
// Only tests import it.
package runtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/records"
)

// AssertGone reads the pid a command wrote and waits briefly for that
// process to be gone: the run's end must have killed it.
func AssertGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the command never started: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for ProcessRunning(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs after the run ended", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BearerProxy forwards to target only the requests that carry
// "Authorization: Bearer token"; the others get 401.
func BearerProxy(t *testing.T, target, token string) string {
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

// CheckStderr wants every line to be an "ask:" message and the last one (or,
// for a run that succeeded, any one) to contain want.
func CheckStderr(t *testing.T, stderr, want string, failed bool) {
	t.Helper()
	if want == "" {
		if stderr != "" {
			t.Errorf("stderr %q, want nothing", stderr)
		}
		return
	}
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "ask: ") {
			t.Errorf("stderr line %q is not an ask: message", l)
		}
	}
	if failed && !strings.Contains(lines[len(lines)-1], want) {
		t.Errorf("last stderr line %q lacks %q", lines[len(lines)-1], want)
	}
	if !failed && !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
}

// InProcessMCP serves an SDK server with a read-only echo tool over
// streamable HTTP on loopback, counting the requests it gets, so that the
// trust rules are tested without Node.
func InProcessMCP(t *testing.T) (string, *atomic.Int64) {
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

func LastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// The MCP integration tests run the reference npm servers, installed by
// scripts/test.sh (`npm ci --prefix testdata/mcp`). Without them the tests
// skip, unless ASK_REQUIRE_MCP=1 (set by scripts/test.sh, as in CI) makes
// that a failure. Under -short they skip: Node takes a while to start.

// MCPServerBin returns the path of an npm MCP server's executable.
func MCPServerBin(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("slow under -short: the reference MCP servers start under Node")
	}
	bin := filepath.Join(mcpDir(), "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("%s is not installed: run `npm ci --prefix testdata/mcp` (needs Node 20+)", bin)
		if os.Getenv("ASK_REQUIRE_MCP") == "1" {
			t.Fatal(msg + "; ASK_REQUIRE_MCP=1 makes this a failure")
		}
		t.Skip(msg)
	}
	return bin
}

// NewestRun is the newest run kept in the history directory dir, or a
// path that does not exist when none is.
func NewestRun(t *testing.T, dir string) string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(names) == 0 {
		return filepath.Join(dir, "no run is kept")
	}
	slices.Sort(names)
	return names[len(names)-1]
}

// ProcessRunning reports whether pid is alive and not a zombie.
func ProcessRunning(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

func ReadTranscript(t *testing.T, path string) []records.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := records.Read(f)
	if err != nil {
		t.Fatalf("transcript: %v", err)
	}
	return evs
}

// StartRemoteEverything starts the reference server-everything in its
// streamableHttp or sse mode, bound to loopback by testdata/mcp/loopback.cjs,
// and returns its base URL ("http://127.0.0.1:PORT"). It is stopped, with
// its process group, when the test ends.
func StartRemoteEverything(t *testing.T, mode string) string {
	t.Helper()
	MCPServerBin(t, "mcp-server-everything") // skips, or fails, without the npm servers
	root := mcpDir()
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

// Summarize names each event with what tells it apart in a fault: a
// response's status, a retry's attempt, a tool's name and failure, a run's
// status and exit code.
func Summarize(evs []records.Event) []string {
	var out []string
	for _, ev := range evs {
		s := ev.Type
		switch ev.Type {
		case records.TypeResponse:
			s += " " + strconv.Itoa(ev.HTTPStatus)
		case records.TypeRetry:
			s += " " + strconv.Itoa(ev.Attempt)
		case records.TypeToolStarted:
			s += " " + ev.Name
		case records.TypeToolFinished:
			s += " " + ev.Name
			if ev.IsError {
				s += " error"
			}
		case records.TypeRunFinished:
			s += fmt.Sprintf(" %s %d", ev.Status, ev.ExitCode)
		}
		out = append(out, s)
	}
	return out
}

// ToolsFile writes a tools file declaring one read-only command tool.
func ToolsFile(t *testing.T, path, tool string) {
	t.Helper()
	spec := fmt.Sprintf(`{"tools":[{"name":%q,"description":"test tool","command":"echo hi","risk":"read"}]}`, tool)
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
}

// WriteConfig writes the config file of a HOME, and returns its path.
func WriteConfig(t *testing.T, home, content string) string {
	t.Helper()
	path := filepath.Join(home, ".config", "ask", "config.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mcpDir is the repository's testdata/mcp, wherever the test runs from.
func mcpDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "mcp")
}
