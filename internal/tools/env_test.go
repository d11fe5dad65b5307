package tools

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestChildEnv(t *testing.T) {
	in := []string{
		"PATH=/usr/bin:/bin",
		"OPENROUTER_API_KEY=fake-or",
		"OPENAI_API_KEY=fake-oa",
		"ANTHROPIC_API_KEY=fake-ant",
		"GEMINI_API_KEY=g",
		"GOOGLE_API_KEY=g2",
		"DEEPSEEK_API_KEY=d",
		"MOONSHOT_API_KEY=m",
		"OLLAMA_API_KEY=o",
		"HOME=/home/u",
		"SOME_VENDOR_API_KEY=x",   // suffix _API_KEY
		"GITHUB_TOKEN=ghp",        // suffix _TOKEN
		"github_token=lower",      // names compared in upper case
		"AWS_SECRET_ACCESS_KEY=a", // contains SECRET
		"CLIENT_SECRET=c",
		"MYSECRETS=c",
		"OLLAMA_HOST=http://localhost:11434", // provider settings that are not secrets stay
		"TOKENIZER_PARALLELISM=false",        // TOKEN not as a suffix: kept
		"API_KEY_FILE=/k",                    // API_KEY not as a suffix: kept
		"EMPTY=",
		"NOEQUALS",
		"LANG=C.UTF-8",
	}
	want := []string{
		"PATH=/usr/bin:/bin",
		"HOME=/home/u",
		"OLLAMA_HOST=http://localhost:11434",
		"TOKENIZER_PARALLELISM=false",
		"API_KEY_FILE=/k",
		"EMPTY=",
		"NOEQUALS",
		"LANG=C.UTF-8",
	}
	got := ChildEnv(in)
	if !slices.Equal(got, want) {
		t.Errorf("ChildEnv =\n%q\nwant\n%q", got, want)
	}
	if len(ChildEnv(nil)) != 0 {
		t.Error("ChildEnv(nil) is not empty")
	}
}

// A model's `git commit` without -m, or anything that pages or asks for a
// password, ends instead of waiting on a terminal nobody watches.
func TestChildrenNeverWaitOnATerminal(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	root, err := NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	script := `git init -q . && git -c user.email=t@x -c user.name=t commit -q --allow-empty 2>&1; ` +
		`echo "editor=$GIT_EDITOR prompt=$GIT_TERMINAL_PROMPT pager=$PAGER git_pager=$GIT_PAGER"; test -t 0 || echo stdin-not-a-terminal`
	res, err := runShell(context.Background(), root, script, nil, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	out := res.stdout.String()
	for _, want := range []string{"Aborting commit due to empty commit message", "editor=true prompt=0 pager=cat git_pager=cat", "stdin-not-a-terminal"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
