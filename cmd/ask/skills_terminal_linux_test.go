//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/term/termtest"
)

// A skill behaves the same with and without a terminal (the peers' skills
// silently do nothing headless): it is listed, loaded, recorded in
// skills_used, and its allowed-tools deny the same call in the same words,
// never by asking.
func TestSkillSameWithAndWithoutATerminal(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, terminal bool) askResult {
		srv := fakeprovider.Start(
			fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "skill", `{"name":"careful"}`)}},
			fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c2", "shell", `{"command":"touch made"}`)}},
			fakeprovider.Reply{Text: "done"},
		)
		defer srv.Close()
		dir := t.TempDir()
		skill := filepath.Join(dir, ".agents", "skills", "careful")
		if err := os.MkdirAll(skill, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: careful\ndescription: Look only.\nallowed-tools: Read\n---\nOnly read.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		tty := ""
		if terminal {
			_, tty = termtest.OpenPTY(t)
		}
		r := runAskTerminal(t, srv, dir, "", terminal, tty, "--json", "--yes", "look")
		if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
			t.Error("the command outside the skill's allowed-tools ran")
		}
		if !gjson.Valid(r.stdout) {
			t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
		}
		return r
	}
	with, without := run(t, true), run(t, false)
	for _, field := range []string{"status", "skills_used", "denials.#.name", "denials.#.reason", "exit_code"} {
		a, b := gjson.Get(with.stdout, field).Raw, gjson.Get(without.stdout, field).Raw
		if a != b {
			t.Errorf("%s: %s at a terminal, %s without", field, a, b)
		}
	}
	if got := gjson.Get(without.stdout, "skills_used").Raw; got != `["careful"]` {
		t.Errorf("skills_used = %s", got)
	}
	if got := gjson.Get(without.stdout, "denials.0.reason").String(); got != "shell is not allowed: the active skill careful's allowed-tools allows only read_file" {
		t.Errorf("the denial says %q", got)
	}
}
