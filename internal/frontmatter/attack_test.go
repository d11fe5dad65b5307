package frontmatter

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A fifo where a SKILL.md or an agent definition is looked for (a command
// of an earlier run can make one in the working directory) is refused at
// once: waiting for a writer would hang every run that looks there.
func TestReadInRefusesAFifoAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "SKILL.md"), 0o644); err != nil {
		t.Skipf("no fifo here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadIn(dir, "SKILL.md")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a fifo was read as a SKILL.md")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadIn waited on a fifo")
	}
}
