package skills

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeSkill writes place/folder/SKILL.md with content, and returns the
// folder.
func writeSkill(t *testing.T, place, folder, content string) string {
	t.Helper()
	dir := filepath.Join(place, folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func skillText(name, desc string, extra ...string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n" + strings.Join(extra, "\n") + "\n---\nDo it well.\n"
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, folder, in string
		allowed          []string
		err              string
	}{
		{"minimal", "pdf", skillText("pdf", "Read PDFs."), nil, ""},
		{"allowed-tools string", "git-log", skillText("git-log", "x", "allowed-tools: Bash(git log:*) Read"), []string{"Bash(git log:*)", "Read"}, ""},
		{"allowed-tools list", "a", skillText("a", "x", "allowed-tools: [read_file, 'shell:go test*']"), []string{"read_file", "shell:go test*"}, ""},
		{"folded description", "a", "---\nname: a\ndescription: >\n  two\n  lines\n---\n", nil, ""},
		{"name not its folder", "b", skillText("a", "x"), nil, `name "a" does not match its folder "b"`},
		{"upper case", "PDF", skillText("PDF", "x"), nil, "only lowercase"},
		{"double hyphen", "a--b", skillText("a--b", "x"), nil, "hyphen"},
		{"leading hyphen", "-a", skillText("-a", "x"), nil, "hyphen"},
		{"no name", "a", "---\ndescription: x\n---\n", nil, "no name"},
		{"no description", "a", "---\nname: a\n---\n", nil, "no description"},
		{"long name", strings.Repeat("a", 65), skillText(strings.Repeat("a", 65), "x"), nil, "more than 64"},
		{"long description", "a", skillText("a", strings.Repeat("d", 1025)), nil, "more than 1024"},
		{"long compatibility", "a", skillText("a", "x", "compatibility: "+strings.Repeat("c", 501)), nil, "more than 500"},
		{"bad allowed-tools", "a", skillText("a", "x", "allowed-tools: {a: b}"), nil, "allowed-tools must be"},
		{"bad yaml", "a", "---\nname: a\ndescription: [x\n---\n", nil, "front matter"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(tt.in), filepath.Join("/x", tt.folder))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != tt.folder || s.Description == "" || !slices.Equal(s.AllowedTools, tt.allowed) || s.Path != filepath.Join("/x", tt.folder, FileName) {
				t.Errorf("got %+v, want name %s, allowed %q", s, tt.folder, tt.allowed)
			}
		})
	}
}

func TestPlaces(t *testing.T) {
	t.Parallel()
	got := Places("/repo/sub/dir", "/repo", "/cfg", "/home/u")
	want := []string{
		"/repo/sub/dir/.agents/skills", "/repo/sub/.agents/skills", "/repo/.agents/skills",
		"/cfg/ask/skills", "/home/u/.agents/skills",
		"/repo/sub/dir/.claude/skills", "/repo/sub/.claude/skills", "/repo/.claude/skills",
		"/home/u/.claude/skills",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Places =\n%q\nwant\n%q", got, want)
	}
	// Outside a repository, only the workdir's own: a parent's are not the
	// project's.
	if got := Places("/tmp/x", "", "", "/home/u"); !slices.Equal(got, []string{"/tmp/x/.agents/skills", "/home/u/.agents/skills", "/tmp/x/.claude/skills", "/home/u/.claude/skills"}) {
		t.Errorf("outside a repository: %q", got)
	}
}

func TestFindFirstNameWinsAndWarns(t *testing.T) {
	t.Parallel()
	near, far := t.TempDir(), t.TempDir()
	writeSkill(t, near, "review", skillText("review", "near review"))
	writeSkill(t, far, "review", skillText("review", "far review"))
	writeSkill(t, far, "lint", skillText("lint", "far lint"))
	writeSkill(t, near, "broken", "---\nname: [\n---\n")
	writeSkill(t, near, "wrong", skillText("other", "x"))
	if err := os.MkdirAll(filepath.Join(near, "no-skill-file"), 0o755); err != nil {
		t.Fatal(err)
	}
	found, warnings := Find([]string{filepath.Join(near, "missing"), near, far})
	if got := Names(found); !slices.Equal(got, []string{"review", "lint"}) {
		t.Errorf("names = %q, want review (the nearer) then lint", got)
	}
	if s, _ := Lookup(found, "review"); s.Description != "near review" {
		t.Errorf("review is %q, want the first place's", s.Description)
	}
	if len(warnings) != 2 {
		t.Fatalf("warnings = %q, want one for broken and one for wrong", warnings)
	}
	for _, w := range warnings {
		if strings.Contains(w, "\n") || !strings.Contains(w, near) {
			t.Errorf("warning %q: want one line naming the file", w)
		}
	}
}

func TestListingCap(t *testing.T) {
	t.Parallel()
	var all []Skill
	for i := range 200 {
		all = append(all, Skill{Name: "s" + strings.Repeat("x", i%10), Description: strings.Repeat("word ", 20)})
	}
	text, listed := Listing(all)
	if len(text) > MaxListing+100 || listed == 0 || listed >= len(all) {
		t.Fatalf("listed %d of %d in %d bytes; want a cut near %d", listed, len(all), len(text), MaxListing)
	}
	if !strings.Contains(text, "more skills are not listed") {
		t.Error("a cut listing does not say so")
	}
	if text, n := Listing(all[:2]); n != 2 || strings.Contains(text, "not listed") {
		t.Errorf("two skills: %d listed, %q", n, text)
	}
	if text, n := Listing(nil); text != "" || n != 0 {
		t.Errorf("no skills: %q", text)
	}
}

func TestToolReturnsBodyAndFiles(t *testing.T) {
	t.Parallel()
	place := t.TempDir()
	dir := writeSkill(t, place, "deploy", skillText("deploy", "Ship it.", "allowed-tools: read_file"))
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "scripts", "run.sh"), []byte("echo ship\n"), 0o644)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("KEY=1"), 0o600)
	if err := os.Symlink(secret, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	found, _ := Find([]string{place})
	var activated []string
	tool := Tool(found, func(s Skill) { activated = append(activated, s.Name) })
	if info := tool.Info(); info.Risk != "read" || info.RequiresApproval {
		t.Errorf("the skill tool is %+v; want read-only, needing no approval", info)
	}
	call := func(args string) (string, error) {
		return tool.Run(context.Background(), json.RawMessage(args))
	}
	out, err := call(`{"name":"deploy"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Do it well.", "scripts/run.sh", "only these tools may be used: read_file"} {
		if !strings.Contains(out, want) {
			t.Errorf("the skill's text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "name: deploy") {
		t.Error("the front matter is returned with the body")
	}
	if !slices.Equal(activated, []string{"deploy"}) {
		t.Errorf("activated = %q", activated)
	}
	if out, err := call(`{"name":"deploy","file":"scripts/run.sh"}`); err != nil || out != "echo ship\n" {
		t.Errorf("reading a file of the skill: %q, %v", out, err)
	}
	for _, path := range []string{"escape", "../../" + filepath.Base(secret), secret, "scripts"} {
		out, err := call(`{"name":"deploy","file":` + strconvQuote(path) + `}`)
		if err == nil || strings.Contains(out, "KEY=1") {
			t.Errorf("file %q: %q, %v; want an error, never a file outside the folder", path, out, err)
		}
	}
	if _, err := call(`{"name":"nope"}`); err == nil || !strings.Contains(err.Error(), "choose one of deploy") {
		t.Errorf("an unknown skill: %v", err)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// FuzzParse: whatever a SKILL.md holds, Parse returns an error or a skill
// that keeps the spec's rules: a valid name that is its folder's, a
// description within its length.
func FuzzParse(f *testing.F) {
	for _, s := range []string{skillText("a", "x"), skillText("a", "x", "allowed-tools: Bash(git:*) Read"), "---\nname: a\ndescription: [x\n---\n", "---\nname: a\nallowed-tools: [a, [b]]\n---\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "/skills/a")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a warning of several lines: %q", err)
			}
			return
		}
		if s.Name != "a" || CheckName(s.Name) != nil || s.Description == "" || len(s.Description) > maxDescription {
			t.Fatalf("Parse accepted %+v", s)
		}
	})
}

// A SKILL.md that links out of its folder is refused: a repository must
// not make ask send the user's other files to a provider.
func TestSkillFileLinkingOutIsRefused(t *testing.T) {
	t.Parallel()
	place, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "notes.md")
	if err := os.WriteFile(secret, []byte(skillText("leak", "SECRET NOTES")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(place, "leak"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(place, "leak", FileName)); err != nil {
		t.Fatal(err)
	}
	found, warnings := Find([]string{place})
	if len(found) != 0 || len(warnings) != 1 || strings.Contains(warnings[0], "SECRET") {
		t.Errorf("found %+v, warnings %q; want the link refused with a warning", found, warnings)
	}
}
