package main

import (
	"path/filepath"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// A run that used an MCP server replays offline: the recorded server
// command starts the server again, its tools really run, and the rebuilt
// requests equal the recorded ones. With --recorded-results no server is
// started and the requests still match.
func TestMCPRunReplays(t *testing.T) {
	t.Parallel()
	bin := mcpServerBin(t, "mcp-server-everything")
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("echo", "everything__echo", `{"message":"hello from ask"}`),
			fakeprovider.Call("sum", "everything__get-sum", `{"a":2,"b":3}`),
		}},
		fakeprovider.Reply{Text: "5, and it echoed"})
	defer srv.Close()
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	wd := t.TempDir()
	rec := runAsk(t, askEnv{server: srv, wd: wd}, "--mcp", bin, "--transcript", transcript, "use the tools")
	if rec.code != exitOK || rec.stdout != "5, and it echoed\n" {
		t.Fatalf("recording: exit %d, stdout %q; stderr %s", rec.code, rec.stdout, rec.stderr)
	}
	srv.Close()

	// Starting the recorded MCP server again needs --yes.
	for _, mode := range [][]string{{"--yes"}, {"--recorded-results"}} {
		args := append(append([]string{"replay", "--check", "--workdir", wd}, mode...), transcript)
		r := runAsk(t, askEnv{wd: wd}, args...)
		if r.code != exitOK || r.stdout != rec.stdout {
			t.Errorf("ask %v: exit %d, stdout %q, want exit 0 and %q; stderr:\n%s", args, r.code, r.stdout, rec.stdout, r.stderr)
		}
	}
}
