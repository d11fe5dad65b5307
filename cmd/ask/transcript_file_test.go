package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
)

// M7 and L3: --transcript run.jsonl followed a symlink the checkout
// planted and overwrote a file outside; transcripts were 0644. A link is
// refused and its target left as it was; a transcript is 0600, even over
// an existing file of wider mode.
func TestTranscriptFileIsPrivateAndNeverThroughALink(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, path, target string)
		ok    bool
	}{
		{"new file", func(*testing.T, string, string) {}, true},
		{"existing 0644 file", func(t *testing.T, path, _ string) {
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"symlink", func(t *testing.T, path, target string) {
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"hard link", func(t *testing.T, path, target string) {
			if err := os.Link(target, path); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "hi"})
			defer srv.Close()
			wd, outside := t.TempDir(), t.TempDir()
			target := filepath.Join(outside, "bashrc")
			if err := os.WriteFile(target, []byte("KEEP ME\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(wd, "run.jsonl")
			c.plant(t, path, target)
			r := runAsk(t, askEnv{server: srv, wd: wd}, "--no-tools", "--transcript", path, "q")
			if got, _ := os.ReadFile(target); string(got) != "KEEP ME\n" {
				t.Errorf("the file outside was written through the transcript path: %.60q", got)
			}
			if !c.ok {
				if r.code != exitUsage || !strings.Contains(r.stderr, "--transcript") {
					t.Errorf("exit %d, stderr %q; want a usage error naming --transcript", r.code, r.stderr)
				}
				return
			}
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			info, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != 0o600 {
				t.Errorf("transcript mode %v, want 0600", info.Mode().Perm())
			}
			if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), `{"type":"run.started"`) {
				t.Errorf("transcript starts %q", b[:min(len(b), 40)])
			}
		})
	}
}
