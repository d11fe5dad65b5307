package noblock

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO with no writer opens at once and says what it is; a regular file
// opens as a plain open leaves it, and reads.
func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	f, info, err := Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if info.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("fifo: mode %v", info.Mode())
	}

	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	f, info, err = OpenIn(root, "file")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 8)
	if n, err := f.Read(b); err != nil || string(b[:n]) != "text" || !info.Mode().IsRegular() {
		t.Errorf("file: read %q, %v; mode %v", b[:n], err, info.Mode())
	}
}
