package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// On a terminal, ask skills list is a table and show the text the skill
// tool returns; the skills' text cannot drive the terminal.
func TestSkillsOnATerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skill := filepath.Join(dir, ".agents", "skills", "review")
	if err := os.MkdirAll(filepath.Join(skill, "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: review\ndescription: \"Review \\e[2Ja diff.\"\nallowed-tools: Read\n---\nRead it \x1b[31mall\x1b[0m.\n"), 0o644)
	os.WriteFile(filepath.Join(skill, "refs", "style.md"), []byte("x"), 0o644)
	run := func(args ...string) (string, string, int) {
		var out, errb strings.Builder
		stdio := &IO{In: strings.NewReader(""), Out: &out, Err: &errb, OutTTY: true,
			Getenv: func(k string) string { return map[string]string{"HOME": dir}[k] }, Now: time.Now, Wd: dir}
		code := runCLI(context.Background(), append([]string{"ask"}, args...), stdio)
		return out.String(), errb.String(), code
	}
	out, errOut, code := run("skills", "list")
	if code != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, "review") || !strings.Contains(out, "Read") {
		t.Errorf("list: exit %d, %q, stderr %q", code, out, errOut)
	}
	out, _, code = run("skills", "show", "review")
	if code != 0 || !strings.Contains(out, "refs/style.md") || !strings.Contains(out, "only these tools may be used: Read") {
		t.Errorf("show: exit %d, %q", code, out)
	}
	for _, o := range []string{out} {
		if strings.Contains(o, "\x1b") {
			t.Errorf("an escape reached the terminal: %q", o)
		}
	}
	if list, _, _ := run("skills", "list"); strings.Contains(list, "\x1b") {
		t.Errorf("an escape reached the terminal: %q", list)
	}
}
