package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/runtest"
)

// The config file's mcpServers, pasted in Cursor's shape (url, headers with
// ${env:NAME}), are listed with their tools; a server that fails is listed
// with its error and the others still are.
func TestMCPListConfigServers(t *testing.T) {
	const token = "config-mcp-token-not-real-4242"
	endpoint := runtest.BearerProxy(t, runtest.StartRemoteEverything(t, "streamableHttp"), token) + "/mcp"
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

// A URL that a transcript names is connected to by `ask replay` only
// with --yes. (That -c goes on without it is internal/run's
// TestMCPRemoteFromTranscriptIsGated.)
func TestMCPRemoteReplayNeedsYes(t *testing.T) {
	t.Parallel()
	endpoint, hits := runtest.InProcessMCP(t)
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
