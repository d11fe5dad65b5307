//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/term/termtest"
)

// On a real terminal, a command that tries to redraw the question as a
// harmless one is shown escaped and whole, and a "no" keeps it from
// running.
func TestHostileCommandAtTheTerminal(t *testing.T) {
	t.Parallel()
	m, tty := termtest.OpenPTY(t)
	hostile := "touch PWN\r\x1b[2K\x1b[1Agit status" + strings.Repeat(" ", 200) + "; echo"
	args, _ := json.Marshal(map[string]string{"command": hostile})
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "shell", string(args))}},
		fakeprovider.Reply{Text: "done"},
	)
	defer srv.Close()
	dir := t.TempDir()
	screen := make(chan string, 1)
	go func() {
		s := termtest.ReadUntil(t, m, "[n]o")
		m.WriteString("n\n")
		screen <- s
	}()
	r := runAskTerminal(t, srv, dir, "", true, tty, "--json", "go")
	shown := <-screen
	if r.code != 0 || !strings.Contains(r.stdout, "the user declined this call") {
		t.Errorf("exit %d, stdout %s", r.code, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "PWN")); err == nil {
		t.Error("the declined command ran")
	}
	for _, raw := range []string{"\x1b[2K", "\x1b[1A", strings.Repeat(" ", 100)} {
		if strings.Contains(shown, raw) {
			t.Errorf("the terminal was sent %q raw:\n%q", raw, shown)
		}
	}
	if !strings.Contains(shown, `touch PWN\r\u001b[2K\u001b[1Agit status⟨200 spaces⟩; echo`) {
		t.Errorf("the question does not show the whole command as it is:\n%q", shown)
	}
}

// With stderr redirected to a file and stdin and stdout on the terminal,
// the approval is asked on the terminal and its answer honoured.
func TestApprovalWithStderrRedirected(t *testing.T) {
	t.Parallel()
	m, tty := termtest.OpenPTY(t)
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "shell", `{"command":"echo approved > out.txt"}`)}},
		fakeprovider.Reply{Text: "done"},
	)
	defer srv.Close()
	dir := t.TempDir()
	go func() {
		termtest.ReadUntil(t, m, "[n]o")
		m.WriteString("y\n")
	}()
	r := runAskTerminal(t, srv, dir, "", false, tty, "go") // errTTY false: stderr is a file
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "out.txt")); string(got) != "approved\n" {
		t.Errorf("the approved command did not run: %q", got)
	}
}
