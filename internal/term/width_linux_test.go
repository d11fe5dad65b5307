//go:build linux

package term

import (
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ask-cli/ask/internal/term/termtest"
)

// The width comes from the kernel, as a resized pane has it: bash does not
// export $COLUMNS, and a status line wider than the pane wraps into copies.
func TestTerminalWidthFromTheKernel(t *testing.T) {
	t.Parallel()
	m, path := termtest.OpenPTY(t)
	if err := unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 37}); err != nil {
		t.Fatal(err)
	}
	pane, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pane.Close()
	if got := Width(int(pane.Fd())); got != 37 {
		t.Errorf("width %d, want 37", got)
	}
	noEnv := func(string) string { return "" }
	if got := Columns(func() int { return Width(int(pane.Fd())) }, noEnv); got != 37 {
		t.Errorf("Columns %d without $COLUMNS, want the kernel's 37", got)
	}
	if got := Width(int(os.Stdin.Fd())); got != 0 && !isTerminal(os.Stdin) {
		t.Errorf("a file has width %d", got)
	}
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
