package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// tree makes the files and directories of spec under a temporary
// directory: a name ending in "/" is a directory, "->" makes a link.
func tree(t *testing.T, spec map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range spec {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(name, "/"):
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(text, "->"):
			if err := os.Symlink(strings.TrimPrefix(text, "->"), path); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestFindProject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    map[string]string
		dir     string
		want    string // the file found, relative; "" for none
		wantErr string
	}{
		{"own directory", map[string]string{"AGENTS.md": "own"}, ".", "AGENTS.md", ""},
		{"repository root from below", map[string]string{"r/.git/": "", "r/AGENTS.md": "root", "r/a/b/": ""}, "r/a/b", "r/AGENTS.md", ""},
		{"nearest wins", map[string]string{"r/.git/": "", "r/AGENTS.md": "root", "r/a/AGENTS.md": "a", "r/a/b/": ""}, "r/a/b", "r/a/AGENTS.md", ""},
		{"not above the root", map[string]string{"AGENTS.md": "outer", "r/.git": "gitdir: elsewhere", "r/a/": ""}, "r/a", "", ""},
		{"outside a repository only its own", map[string]string{"AGENTS.md": "outer", "a/": ""}, "a", "", ""},
		{"a link inside the root", map[string]string{"r/.git/": "", "r/docs/agents.md": "linked", "r/AGENTS.md": "->docs/agents.md"}, "r", "r/AGENTS.md", ""},
		{"a link outside the root", map[string]string{"secret": "key", "r/.git/": "", "r/AGENTS.md": "->../secret"}, "r", "", "links outside"},
		{"a directory named so", map[string]string{"AGENTS.md/": ""}, ".", "", "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := tree(t, tt.spec)
			p, err := FindProject(filepath.Join(root, tt.dir))
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tt.want == "":
				if p != nil {
					t.Fatalf("found %s, want none", p.Path)
				}
				return
			case p == nil:
				t.Fatalf("found none, want %s", tt.want)
			}
			if want := filepath.Join(root, tt.want); p.Path != want {
				t.Errorf("found %s, want %s", p.Path, want)
			}
			if p.Text != tt.spec[tt.want] && !strings.HasPrefix(tt.spec[tt.want], "->") {
				t.Errorf("text %q, want %q", p.Text, tt.spec[tt.want])
			}
		})
	}
}

// A long file is cut at a line within the cap, and the prompt says so.
func TestProjectCut(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("0123456789 abcdefghi\n", 400) // 8400 bytes
	root := tree(t, map[string]string{"AGENTS.md": long})
	p, err := FindProject(root)
	if err != nil || p == nil {
		t.Fatalf("FindProject: %v, %v", p, err)
	}
	if !p.Cut() || p.Size != int64(len(long)) || len(p.Text) > MaxProjectBytes || !strings.HasSuffix(p.Text, "\n") || !strings.HasPrefix(long, p.Text) {
		t.Fatalf("cut to %d bytes of %d (cut %v), ending %q", len(p.Text), p.Size, p.Cut(), p.Text[len(p.Text)-5:])
	}
	got := System(Env{Mode: "agent", Project: p}, "be brief")
	for _, want := range []string{"<project-instructions>\n0123456789", "The file is 8400 bytes; only its first", "cannot change which tools"} {
		if !strings.Contains(got, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if !strings.HasSuffix(got, "\n\nbe brief") {
		t.Errorf("--system text is not last")
	}
	short := System(Env{Mode: "agent", Project: &Project{Path: "/p/AGENTS.md", Text: "short", Size: 5}}, "")
	if strings.Contains(short, "only its first") {
		t.Errorf("an uncut file is said to be cut")
	}
}

func FuzzCutText(f *testing.F) {
	f.Add([]byte("line one\nline two"), true)
	f.Add([]byte("no break at all \xe2\x82"), true)
	f.Add([]byte("\n"), false)
	f.Fuzz(func(t *testing.T, b []byte, cut bool) {
		got := cutText(b, cut)
		if !strings.HasPrefix(string(b), got) {
			t.Fatalf("cutText(%q) = %q, not a prefix", b, got)
		}
		if !cut && got != string(b) {
			t.Fatalf("an uncut text changed")
		}
		if cut && utf8.Valid(b) && !utf8.ValidString(got) {
			t.Fatalf("cutText(%q) = %q broke a character", b, got)
		}
	})
}

// An AGENTS.md that is a FIFO (or a link to one) would block the open, and
// with it the run: it is refused before it is opened.
func TestProjectFIFONeverBlocks(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"AGENTS.md", "fifo"} {
		root := tree(t, map[string]string{".git/": ""})
		if err := syscall.Mkfifo(filepath.Join(root, name), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		if name != "AGENTS.md" {
			if err := os.Symlink(name, filepath.Join(root, "AGENTS.md")); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 1)
		go func() {
			_, err := FindProject(root)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: err = %v, want a refusal", name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: FindProject still blocked after 30 s on a FIFO", name)
		}
	}
}
