package realpath

import (
	"os"
	"path/filepath"
	"testing"
)

// Existing gives what resolving each ancestor in turn with EvalSymlinks
// gives (its plain definition, below), with fewer calls.
func TestExisting(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "real", "file"), nil, 0o644))
	must(os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")))
	must(os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling")))
	must(os.Symlink("dangling", filepath.Join(dir, "real", "chain")))
	for _, p := range []string{
		"real", "real/file", "real/sub", "real/missing", "real/missing/deeper/still",
		"link", "link/file", "link/missing/x", "dangling", "dangling/x", "real/chain", "real/chain/x",
		"missing", "missing/a/b", "real/file/under-a-file",
	} {
		abs := filepath.Join(dir, p)
		if got, want := Existing(abs), resolveBySteps(abs); got != want {
			t.Errorf("Existing(%s) = %q, want %q", p, got, want)
		}
	}
}

// resolveBySteps is Existing's definition: the symlinks of the
// deepest ancestor EvalSymlinks resolves, and the rest appended.
func resolveBySteps(abs string) string {
	var missing []string
	for cur := abs; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			for i := len(missing) - 1; i >= 0; i-- {
				real = filepath.Join(real, missing[i])
			}
			return real
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		missing = append(missing, filepath.Base(cur))
		cur = parent
	}
}
