//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
)

// openPTY returns a pseudo-terminal's controlling side and the path of its
// terminal side, which stands in for /dev/tty.
func openPTY(t *testing.T) (*os.File, string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	rc, err := m.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n uint32
	var ioctlErr error
	err = rc.Control(func(fd uintptr) {
		var unlock int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
			ioctlErr = fmt.Errorf("unlock: %w", e)
			return
		}
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
			ioctlErr = fmt.Errorf("pty number: %w", e)
		}
	})
	if err != nil || ioctlErr != nil {
		t.Skipf("no pseudo-terminal: %v %v", err, ioctlErr)
	}
	return m, fmt.Sprintf("/dev/pts/%d", n)
}

// readUntil reads the terminal's screen until it shows s.
func readUntil(t *testing.T, m *os.File, s string) string {
	t.Helper()
	var screen strings.Builder
	buf := make([]byte, 512)
	for !strings.Contains(screen.String(), s) {
		n, err := m.Read(buf)
		if err != nil {
			t.Fatalf("terminal output %q, waiting for %q: %v", screen.String(), s, err)
		}
		screen.Write(buf[:n])
	}
	return screen.String()
}

// On a real terminal: the question is shown there, the answer typed there
// is taken, an open question gives up on Ctrl-C, and closing the terminal
// ends the reader goroutine blocked in a read.
func TestOpenTerminalOnAPseudoTerminal(t *testing.T) {
	m, path := openPTY(t)
	tp, closeTTY := openTerminal(path)
	if tp == nil {
		t.Fatalf("openTerminal(%s) found no terminal", path)
	}
	defer closeTTY()

	type result struct {
		answers []policy.Answer
		err     error
	}
	ask := func(ctx context.Context) chan result {
		ch := make(chan result, 1)
		go func() {
			a, err := tp.Approve(ctx, pending(1))
			ch <- result{a, err}
		}()
		return ch
	}

	done := ask(context.Background())
	readUntil(t, m, "allow shell (exec) cmd 0? [y]es [n]o [a]lways: ")
	if _, err := m.WriteString("a\n"); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || len(r.answers) != 1 || r.answers[0] != policy.Always {
		t.Fatalf("typed a: %v, %v", r.answers, r.err)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	done = ask(ctx)
	readUntil(t, m, "[a]lways: ")
	cancel(loop.ErrInterrupted)
	if r := <-done; !errors.Is(r.err, loop.ErrInterrupted) {
		t.Fatalf("Ctrl-C during the question: %v, %v", r.answers, r.err)
	}

	closeTTY()
	for range tp.lines { // ends only when the reader goroutine returns
	}
}
