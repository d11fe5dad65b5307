//go:build linux

package main

import (
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/term/termtest"
)

// TestBatchProgressAtTheTerminal runs the real ask batch with stdout and
// stderr on one pseudo-terminal, as a person at a terminal does: the
// progress line shows the total, and each result line starts on a line
// of its own, the progress line cleared first, never glued onto its end
// (issue 38, P1).
func TestBatchProgressAtTheTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("a batch of a second and more")
	}
	t.Parallel()
	bin, err := exec.LookPath("ask")
	if err != nil || !strings.Contains(bin, "testscript-main") {
		t.Fatalf("ask is not the test binary installed by TestMain: %q, %v", bin, err)
	}
	m, ttyPath := termtest.OpenPTY(t)
	tty, err := os.OpenFile(ttyPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	echo := startEcho(t, 150*time.Millisecond)
	dir := t.TempDir()
	cmd := exec.Command(bin, "batch", "-j", "2", taskFile(t, 10))
	cmd.Env = append(os.Environ(), "ASK_PROVIDER=openai", "ASK_BASE_URL="+echo.URL, "OPENAI_API_KEY=fake-test-not-a-real-key-0000",
		"HOME="+dir, "XDG_STATE_HOME="+dir, "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	screen := make(chan string)
	go func() {
		b, _ := io.ReadAll(m) // until the terminal side is closed by all
		screen <- string(b)
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ask batch: %v", err)
	}
	tty.Close()
	var shown string
	select {
	case shown = <-screen:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal did not close")
	}
	if !regexp.MustCompile(`ask batch: \d+/10 done`).MatchString(shown) {
		t.Errorf("the progress line shows no total:\n%q", shown)
	}
	if !strings.Contains(shown, "ask batch: 10/10 done") {
		t.Errorf("the last progress line is not 10/10:\n%q", shown)
	}
	results := 0
	for i := 0; ; {
		j := strings.Index(shown[i:], `{"id":"t`)
		if j < 0 {
			break
		}
		at := i + j
		before := shown[:at]
		if !strings.HasSuffix(before, "\n") && !strings.HasSuffix(before, "\r\x1b[K") && before != "" {
			t.Errorf("a result line is glued onto %q", before[max(0, len(before)-60):])
		}
		results++
		i = at + 1
	}
	if results != 10 {
		t.Errorf("%d result lines on the terminal, want 10:\n%q", results, shown)
	}
	if !regexp.MustCompile(`\d+/10 done[^\n]*\r\x1b\[K\{"id"`).MatchString(shown) {
		t.Errorf("no result line came while a progress line was drawn, so the test proves nothing:\n%q", shown)
	}
}
