package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
)

// At a terminal, the status line names the MCP servers a run is waiting
// for while they start, and goes once they are up.
func TestStatusLineNamesStartingMCPServers(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "hello"})
	defer srv.Close()
	wd := t.TempDir()
	gate, started := filepath.Join(t.TempDir(), "gate"), filepath.Join(t.TempDir(), "started")
	done := make(chan askResult, 1)
	go func() {
		// fakemcp is on PATH: testscript.Main puts its commands there.
		done <- runAskTerminal(t, srv, wd, "", true, "", "--mcp", "FAKEMCP_LOG="+started+" FAKEMCP_GATE="+gate+" fakemcp", "hi")
	}()
	// The server answers nothing until the gate exists: once it has
	// started, the line has had time to show.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
	}
	time.Sleep(100 * time.Millisecond)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var r askResult
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end")
	}
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "· starting MCP server fakemcp · ") {
		t.Errorf("the status line never named the starting server:\n%q", r.stderr)
	}
	// Cleared before the first step's line.
	if i, j := strings.LastIndex(r.stderr, "starting MCP server"), strings.Index(r.stderr, "step 1/"); j < i {
		t.Errorf("the starting line outlived the start:\n%q", r.stderr)
	}
}
