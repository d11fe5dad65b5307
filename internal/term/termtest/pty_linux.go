//go:build linux

package termtest

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// OpenPTY returns a pseudo-terminal's controlling side and the path of its
// terminal side, which stands in for /dev/tty.
func OpenPTY(t *testing.T) (*os.File, string) {
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

// ReadUntil reads the terminal's screen until it shows s.
func ReadUntil(t *testing.T, m *os.File, s string) string {
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
