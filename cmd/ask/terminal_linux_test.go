//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// At a terminal, an edit is asked about with its change in view; the
// question starts on a line of its own after the model's text, which real
// models end without a newline before a call; "always" says what it
// covers; and the text after an answer follows on the next line, with no
// blank line between (issue 30).
func TestEditQuestionAtTheTerminal(t *testing.T) {
	t.Parallel()
	m, ttyPath := termtest.OpenPTY(t)
	tty, err := os.OpenFile(ttyPath, os.O_RDWR, 0) // stdout is the same terminal
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("fix teh typo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.Start(
		fakeprovider.Reply{Text: "I will fix the typo.", Calls: []providers.ToolCall{
			fakeprovider.Call("e1", "edit_file", `{"path":"notes.txt","old_text":"teh","new_text":"the"}`)}},
		fakeprovider.Reply{Text: "Now the junk.", Calls: []providers.ToolCall{
			fakeprovider.Call("s1", "shell", `{"command":"rm -f junk.txt"}`)}},
		fakeprovider.Reply{Text: "Done."},
	)
	defer srv.Close()
	// A question that never comes fails the test instead of hanging it.
	m.SetReadDeadline(time.Now().Add(30 * time.Second))
	screen := make(chan string, 1)
	go func() {
		s := termtest.ReadUntil(t, m, "[n]o [a]lways any edit inside the working directory: ")
		m.WriteString("y\n")
		s += termtest.ReadUntil(t, m, "[n]o [a]lways any rm: ")
		m.WriteString("n\n")
		s += termtest.ReadUntil(t, m, "Done.")
		screen <- s
	}()
	r := runAsk(t, askEnv{server: srv, wd: dir, stdout: tty, outTTY: true, ttyPath: ttyPath}, "--timeout", "30s", "fix the typo")
	var shown string
	select {
	case shown = <-screen:
	case <-time.After(30 * time.Second):
		t.Fatalf("the terminal never showed both questions; exit %d: %s", r.code, r.stderr)
	}
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != "fix the typo\n" {
		t.Errorf("the approved edit was not made: %q", got)
	}
	// The terminal shows a newline as \r\n.
	for _, want := range []string{
		"I will fix the typo.\r\n  new_text: the\r\n  old_text: teh\r\n  change:\r\n    - teh\r\n    + the\r\n" +
			"ask: allow edit_file (write) notes.txt? [y]es [n]o [a]lways any edit inside the working directory: y\r\n" +
			"Now the junk.\r\n" +
			"ask: allow shell (exec) rm -f junk.txt? [y]es [n]o [a]lways any rm: n\r\n" +
			"Done.",
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal shows\n%q\nwant it to hold\n%q", shown, want)
		}
	}
}

// At a terminal, the lines a run says after streaming its answer (a
// check's, a Stop hook's) start on a line of their own, never glued to
// the answer's last word, which models end without a newline (issue 38,
// A7).
func TestCheckLineBelowTheAnswerAtTheTerminal(t *testing.T) {
	t.Parallel()
	m, ttyPath := termtest.OpenPTY(t)
	tty, err := os.OpenFile(ttyPath, os.O_RDWR, 0) // stdout and stderr: the same terminal
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "All done."})
	defer srv.Close()
	m.SetReadDeadline(time.Now().Add(30 * time.Second))
	screen := make(chan string, 1)
	go func() { screen <- termtest.ReadUntil(t, m, " out") }() // the run's summary, its last line
	r := runAsk(t, askEnv{server: srv, stdout: tty, stderr: tty, tty: true, ttyPath: ttyPath}, "--until", "true", "finish it")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	var shown string
	select {
	case shown = <-screen:
	case <-time.After(30 * time.Second):
		t.Fatal("the terminal never showed the check's line")
	}
	if strings.Contains(shown, "All done.ask:") || !strings.Contains(shown, "All done.\r\nask: check 1/3: true passed, ") ||
		strings.Contains(shown, "\r\n\r\n") {
		t.Errorf("the check's line is not on a line of its own:\n%q", shown)
	}
}
