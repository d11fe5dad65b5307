package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestWritesControlSeesAGitDirectoryOutsideGit checks which writes the
// file tools put to a person as writes into version control (issue 29,
// L6): a file named HEAD, which makes a directory with objects and refs a
// repository, and any write under a directory that has one; not a project's
// own config files, refs or objects directories.
func TestWritesControlSeesAGitDirectoryOutsideGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{"repo/HEAD", "app/config", "app/objects/x", "docs/refs/a.md"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want bool
	}{
		{"evil/HEAD", true},
		{"HEAD", true},
		{"evil/head", true},
		{"repo/config", true},
		{"repo/objects/ab/cdef", true},
		{"repo/refs/heads/main", true},
		{"repo/hooks/pre-commit", true},
		{".git/config", true},
		{"sub/.git", true},
		{"app/config", false},
		{"app/objects/y", false},
		{"docs/refs/b.md", false},
		{"config/settings.yaml", false},
		{"src/HEADER.h", false},
		{"notes.txt", false},
	}
	for _, tt := range tests {
		args, _ := json.Marshal(map[string]string{"path": tt.path, "content": "x"})
		for _, w := range []interface{ WritesControl(string) (string, bool) }{writeFile{root}, editFile{root}} {
			if _, got := w.WritesControl(string(args)); got != tt.want {
				t.Errorf("%T %s: writes control %v, want %v", w, tt.path, got, tt.want)
			}
		}
	}
}
