//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
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
	readUntil(t, m, "allow shell (exec) cmd 0? [y]es [n]o [a]lways cmd: ")
	if _, err := m.WriteString("a\n"); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || len(r.answers) != 1 || r.answers[0] != policy.Always {
		t.Fatalf("typed a: %v, %v", r.answers, r.err)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	done = ask(ctx)
	readUntil(t, m, "[a]lways cmd: ")
	cancel(loop.ErrInterrupted)
	if r := <-done; !errors.Is(r.err, loop.ErrInterrupted) {
		t.Fatalf("Ctrl-C during the question: %v, %v", r.answers, r.err)
	}

	closeTTY()
	for range tp.lines { // ends only when the reader goroutine returns
	}
}

// On a real terminal, a command that tries to redraw the question as a
// harmless one is shown escaped and whole, and a "no" keeps it from
// running.
func TestHostileCommandAtTheTerminal(t *testing.T) {
	t.Parallel()
	m, tty := openPTY(t)
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
		s := readUntil(t, m, "[n]o")
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
	m, tty := openPTY(t)
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "shell", `{"command":"echo approved > out.txt"}`)}},
		fakeprovider.Reply{Text: "done"},
	)
	defer srv.Close()
	dir := t.TempDir()
	go func() {
		readUntil(t, m, "[n]o")
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
