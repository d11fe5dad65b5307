package agents

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	d, err := Parse([]byte("---\nname: reviewer\ndescription: Reviews diffs.\ntools: Read, Grep, Bash(git diff:*)\ndisallowedTools: [Write]\nmodel: gpt-5-mini\nmaxTurns: 7\ncolor: blue\n---\nYou review.\n"), "/x/reviewer.md")
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "reviewer" || d.Description != "Reviews diffs." || !slices.Equal(d.Tools, []string{"Read", "Grep", "Bash(git diff:*)"}) ||
		!slices.Equal(d.Disallowed, []string{"Write"}) || d.Model != "gpt-5-mini" || d.MaxTurns != 7 || d.Prompt != "You review." || !d.toolsGiven {
		t.Errorf("got %+v", d)
	}
	if d, err := Parse([]byte("---\ndescription: x\n---\nbody"), "/x/helper.md"); err != nil || d.Name != "helper" || d.toolsGiven {
		t.Errorf("no name: %+v, %v; want the file's name and no tool list", d, err)
	}
	if d, err := Parse([]byte("---\ntools: []\n---\n"), "/x/none.md"); err != nil || !d.toolsGiven || len(d.Tools) != 0 {
		t.Errorf("tools: [] is %+v, %v; want a list that leaves no tool", d, err)
	}
	for _, bad := range []string{"---\nname: a b\n---\n", "---\nmaxTurns: -1\n---\n", "---\ntools: {a: 1}\n---\n", "no front matter"} {
		if _, err := Parse([]byte(bad), "/x/a.md"); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want a one-line error", bad, err)
		}
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	near, far := t.TempDir(), t.TempDir()
	write := func(dir, name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(near, "a.md", "---\nname: a\ndescription: near\n---\n")
	write(far, "a.md", "---\nname: a\ndescription: far\n---\n")
	write(far, "b.md", "---\ndescription: b\n---\n")
	write(near, "bad.md", "---\nname: [\n---\n")
	write(near, "notes.txt", "not a definition")
	found, warnings := Find([]string{near, far, filepath.Join(near, "missing")})
	if len(found) != 2 || found[0].Description != "near" || found[1].Name != "b" {
		t.Errorf("found %+v; want the nearer a, then b", found)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "bad.md") {
		t.Errorf("warnings %q; want one naming bad.md", warnings)
	}
}

// FuzzParse: whatever a definition holds, Parse returns a one-line error
// or a definition with a valid name and no negative turns.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"---\nname: a\ntools: Read, Bash(git:*)\nmaxTurns: 3\n---\nbody", "---\ntools: [a, b]\n---\n", "---\nmaxTurns: x\n---\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data, "/agents/x.md")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a warning of several lines: %q", err)
			}
			return
		}
		if !validName(d.Name) || d.MaxTurns < 0 {
			t.Fatalf("Parse accepted %+v", d)
		}
	})
}

// A definition that links out of its folder is refused.
func TestDefinitionLinkingOutIsRefused(t *testing.T) {
	t.Parallel()
	place, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "notes.md")
	if err := os.WriteFile(secret, []byte("---\nname: leak\n---\nSECRET NOTES"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(place, "leak.md")); err != nil {
		t.Fatal(err)
	}
	found, warnings := Find([]string{place})
	if len(found) != 0 || len(warnings) != 1 || strings.Contains(warnings[0], "SECRET") {
		t.Errorf("found %+v, warnings %q; want the link refused with a warning", found, warnings)
	}
}
