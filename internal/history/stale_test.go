package history

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The copies killed runs leave behind are removed (by about one run in
// staleCheckEvery as it starts keeping its own); those of runs still going
// (written lately) stay, and so does what is not a copy.
func TestStaleLastRunCopiesAreRemoved(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".last-111.jsonl")
	fresh := filepath.Join(dir, ".last-222.jsonl")
	other := filepath.Join(dir, "notes.jsonl")
	for _, p := range []string{stale, fresh, other} {
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{stale, other} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleCopies(dir, time.Now())
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale copy is still there (%v)", err)
	}
	for _, p := range []string{fresh, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}
