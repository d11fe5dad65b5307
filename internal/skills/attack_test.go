package skills

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A fifo in a skill's folder (a command of the run can make one there,
// in the working directory's .agents/skills) is not a file: reading it
// through the skill tool must refuse at once, not wait for a writer that
// never comes and hold the run past its timeout.
func TestSkillFileFifoDoesNotHang(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("---\nname: s\ndescription: d\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("no fifo here: %v", err)
	}
	s := Skill{Name: "s", Dir: dir}
	done := make(chan error, 1)
	go func() {
		_, err := ReadFile(s, "pipe")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a file") {
			t.Errorf("ReadFile of a fifo = %v, want it refused as not a file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile waited on a fifo")
	}
}
