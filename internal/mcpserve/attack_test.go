package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
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
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/run"
)

// keptRun makes a kept run in wd, under the state directory state, as the
// person's own `ask` there would (a server started with flags), and
// returns its id.
func keptRun(t *testing.T, state, wd, answer string, flags ...any) string {
	t.Helper()
	model := fakeprovider.Start(fakeprovider.Reply{Text: answer})
	earlier := serveWith(t, model, func(s *serving) { s.wd, s.vars["XDG_STATE_HOME"] = wd, state }, flags...)
	res := earlier.call(context.Background(), "ask", map[string]any{"prompt": "read the secrets file"})
	if res.IsError {
		t.Fatalf("the earlier run: %s", text(res))
	}
	return outcome(t, res).RunID
}

// sharing is a server in its own working directory whose state directory
// is state.
func sharing(state string) func(*serving) {
	return func(s *serving) { s.vars["XDG_STATE_HOME"] = state }
}

// A client's ask_reply may carry on only the server's own directory's
// runs: a run id from another project would hand that project's
// conversation (the files its model read) to this client.
func TestServeReplyRefusesARunOfAnotherDirectory(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	other := keptRun(t, state, t.TempDir(), "the other project's secret is hunter2")

	model := fakeprovider.Start(fakeprovider.Reply{Text: "It was hunter2."})
	s := serveWith(t, model, sharing(state))
	res := s.call(context.Background(), "ask_reply", map[string]any{"run_id": other, "prompt": "what was the secret?"})
	for _, req := range model.Requests() {
		if strings.Contains(string(req), "hunter2") {
			t.Fatalf("another directory's conversation reached this client's run: %s", req)
		}
	}
	if !res.IsError || !strings.Contains(text(res), "outside this server's working directory") {
		t.Errorf("ask_reply = %q (error %v), want it refused as another directory's run", text(res), res.IsError)
	}
}

// A file in the working directory named like a run id is the
// repository's, not a kept run: ask_reply must not read it as one.
func TestServeReplyIgnoresAFileNamedLikeARunID(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	wd := t.TempDir()
	forged := keptRun(t, state, wd, "FORGED conversation")
	// The repository holds that transcript under a name no kept run has.
	data, err := os.ReadFile(filepath.Join(state, "ask", "runs", forged+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const planted = "20200101-000000.000000-abcd"
	if err := os.WriteFile(filepath.Join(wd, planted), data, 0o644); err != nil {
		t.Fatal(err)
	}
	model := fakeprovider.Start(fakeprovider.Reply{Text: "Went on."})
	s := serveWith(t, model, func(s *serving) { s.wd, s.vars["XDG_STATE_HOME"] = wd, t.TempDir() })
	res := s.call(context.Background(), "ask_reply", map[string]any{"run_id": planted, "prompt": "go on"})
	if len(model.Requests()) != 0 {
		t.Fatalf("a file of the working directory was carried on as a kept run: %s", model.Requests()[0])
	}
	if !res.IsError || !strings.Contains(text(res), "no kept run") {
		t.Errorf("ask_reply = %q (error %v), want no kept run", text(res), res.IsError)
	}
}

// A kept run's mode is carried on, and a carried mode beats the config
// file: the person's own agent-mode run must not lift a server whose
// config keeps it to mode ask.
func TestServeReplyCannotWidenTheModeThroughAKeptRun(t *testing.T) {
	t.Parallel()
	state, wd, home := t.TempDir(), t.TempDir(), t.TempDir()
	agentRun := keptRun(t, state, wd, "Done.", "mode", "agent")
	writeConfig(t, home, `{"mode": "ask"}`)

	model := fakeprovider.Start(fakeprovider.Reply{Text: "Went on."})
	s := serveWith(t, model, func(s *serving) { s.wd, s.vars["XDG_STATE_HOME"], s.vars["HOME"] = wd, state, home })
	res := s.call(context.Background(), "ask_reply", map[string]any{"run_id": agentRun, "prompt": "now change the files"})
	if res.IsError {
		if !strings.Contains(text(res), `"mode" would widen`) {
			t.Errorf("ask_reply refused with %q, want the mode named", text(res))
		}
		return
	}
	if mode := startedMode(t, state, outcome(t, res).RunID); mode != "ask" {
		t.Errorf("the reply ran in mode %q; the server's config allows at most ask", mode)
	}
}

func writeConfig(t *testing.T, home, body string) {
	t.Helper()
	dir := filepath.Join(home, ".config", "ask")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startedMode is the mode a kept run's run.started event records.
func startedMode(t *testing.T, state, id string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(state, "ask", "runs", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	sc.Scan()
	var e records.Event
	if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	return e.Mode
}

// A server started in a directory reached through a link still takes a
// subdirectory: the client's directory is measured from the real one.
func TestServeWorkdirUnderALinkedRoot(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	if err := os.Mkdir(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(t.TempDir(), "checkout")
	if err := os.Symlink(real, linked); err != nil {
		t.Fatal(err)
	}
	model := fakeprovider.Start(fakeprovider.Reply{Text: "Looked."})
	s := serveWith(t, model, func(s *serving) { s.wd = linked })
	res := s.call(context.Background(), "ask", map[string]any{"prompt": "look", "workdir": "sub"})
	if res.IsError {
		t.Fatalf("a directory inside a linked working directory was refused: %s", text(res))
	}
}

// ask mcp serve --listen serves the processes of its own user only: a
// client running as another user (nobody) is refused before it can call
// anything, and one of the same user is served.
func TestServeHTTPServesOnlyItsOwnUser(t *testing.T) {
	if os.Getenv("ASK_TEST_MCP_CLIENT") != "" {
		t.Skip("the client's side runs in TestServeHTTPClient")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run a client as another user")
	}
	ready := make(chan net.Addr, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := (&Server{Inputs: run.Inputs{Wd: t.TempDir(), Getenv: func(string) string { return "" }}}).New()
	if err != nil {
		t.Fatal(err)
	}
	var refusals atomic.Int32
	go ServeHTTP(ctx, srv, "127.0.0.1:0", func(a net.Addr) { ready <- a }, func(string) { refusals.Add(1) })
	addr := (<-ready).String()

	// The test binary, copied where nobody may run it.
	dir, err := os.MkdirTemp("", "ask-mcpserve-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	self, _ := os.Executable()
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "mcpserve.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil || os.Chmod(dir, 0o755) != nil {
		t.Fatalf("cannot set up a directory for nobody: %v", err)
	}
	client := func(uid uint32) error {
		cmd := exec.Command(bin, "-test.run=^TestServeHTTPClient$", "-test.count=1")
		cmd.Dir = dir
		cmd.Env = []string{"ASK_TEST_MCP_CLIENT=" + addr, "HOME=" + dir}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	if err := client(65534); err == nil {
		t.Fatal("a client running as nobody was served")
	}
	if refusals.Load() == 0 {
		t.Error("the refusal was not told")
	}
	if err := client(uint32(os.Getuid())); err != nil {
		t.Fatalf("a client of the server's own user was refused: %v", err)
	}
}

// TestServeHTTPClient is the client side of TestServeHTTPServesOnlyItsOwnUser:
// it passes only when the server at ASK_TEST_MCP_CLIENT lists its tools.
func TestServeHTTPClient(t *testing.T) {
	addr := os.Getenv("ASK_TEST_MCP_CLIENT")
	if addr == "" {
		t.Skip("run by TestServeHTTPServesOnlyItsOwnUser")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "client", Version: "1"}, nil)
	session, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + addr, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	if _, err := session.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
}
