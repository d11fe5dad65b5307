package worktree

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A transcript's workdir that lies under .git/ask-worktrees as written
// but leads out through a link (a command in the main checkout replaced
// a kept worktree by `NAME -> /`) is no worktree ask made: ask resume
// must not carry a deferred run on there.
func TestHoldsReadsLinks(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	root := filepath.Join(dir, ".git", Dir)
	if err := os.MkdirAll(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for path, want := range map[string]bool{
		filepath.Join(root, "escape"):               false,
		filepath.Join(root, "escape", "sub"):        false,
		filepath.Join(root, "real", "sub"):          true,
		filepath.Join(root, "alias", "sub"):         true,
		filepath.Join(root, "not-yet", "made"):      true,
		filepath.Join(root, "escape", "not", "yet"): false,
	} {
		if got := Holds(ctx, dir, path); got != want {
			t.Errorf("Holds(%s) = %t, want %t", path, got, want)
		}
	}
}
