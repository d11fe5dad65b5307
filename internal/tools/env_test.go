package tools

import (
	"context"
	"net/url"
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

// Issue 37, item 5: a password in a variable's value is found in any
// form: a list split on "," and "|", a URL without a scheme.
func TestPasswords(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		value string
		want  []string
	}{
		{"https://proxy.golang.org,https://ci:PW1secret@corp.example", []string{"PW1secret"}},
		{"https://proxy.golang.org|https://ci:PW2secret@corp.example|direct", []string{"PW2secret"}},
		{"ci:PW3secret@proxy:3128", []string{"PW3secret"}},
		{"//ci:PW4secret@proxy:3128", []string{"PW4secret"}},
		{"http://u:p%40ss-word@proxy", []string{"p%40ss-word", "p@ss-word"}},
		{"http://u:p@ss@proxy", []string{"p@ss"}},
		{"https://a:one1@x, https://b:two2@y", []string{"one1", "two2"}},
		{"socks5://user:pw5@[::1]:1080", []string{"pw5"}},
		// No password: a user alone, an e-mail address, a module version.
		{"https://proxy.golang.org,direct", nil},
		{"http://user@proxy:3128", nil},
		{"git@github.com:o/r.git", nil},
		{"someone@example.com", nil},
		{"example.com/mod@v1.2.3", nil},
		{"", nil},
	} {
		if got := Passwords(tt.value); !slices.Equal(got, tt.want) {
			t.Errorf("Passwords(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
	if BuildVar("GOPROXY", "https://proxy.golang.org,https://ci:PW1secret@corp") || BuildVar("HTTPS_PROXY", "ci:PW@proxy:3128") {
		t.Error("a build variable carrying a password is kept")
	}
	if !BuildVar("GOPROXY", "https://proxy.golang.org,direct") {
		t.Error("GOPROXY without a password is dropped")
	}
}

// Under --safe (KeepOnly), a variable carrying a password is dropped even
// when the config names it to keep.
func TestKeepOnlyDropsPasswords(t *testing.T) {
	t.Parallel()
	r := &Root{Environ: func() []string {
		return []string{"GOPROXY=https://proxy.golang.org,https://ci:PW@corp", "HTTPS_PROXY=ci:PW@proxy:3128",
			"CORP_URL=corp:PW@host", "GOFLAGS=-mod=mod", "CORP_NAME=x"}
	}}
	r.KeepOnly("CORP_URL", "CORP_NAME")
	env := strings.Join(r.ChildEnv(), "\n")
	if strings.Contains(env, "PW") || !strings.Contains(env, "GOFLAGS=-mod=mod") || !strings.Contains(env, "CORP_NAME=x") {
		t.Errorf("the environment under KeepOnly:\n%s", env)
	}
}

// Passwords never panics, and every password it finds is in the value
// (as it is, or unescaped once).
func FuzzPasswords(f *testing.F) {
	for _, s := range []string{"https://a:b@c,d|e", "ci:PW@proxy:3128", "u:p%41@h", "@", ":@", "a:@b", "x://y:z@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		for _, pw := range Passwords(value) {
			if pw == "" {
				t.Fatalf("an empty password in %q", value)
			}
			if !strings.Contains(value, pw) {
				if _, err := url.PathUnescape(pw); err != nil {
					t.Fatalf("%q is not in %q", pw, value)
				}
			}
		}
	})
}
