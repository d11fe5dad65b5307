package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		shell string
		want  []string
	}{
		{"bash", []string{"complete -o default -F _ask_completion ask", "--provider", "--profile", "--color", "--allow-tool", `"/config"`,
			"openai-responses", "compgen -d", "bash zsh fish"}},
		{"zsh", []string{"#compdef ask", "'(--provider -p)'{--provider,-p}", "--profile[", "'*--allow-tool[", ":color:(auto always never)",
			"_ask_config", "compdef _ask ask", "'1:value:(bash zsh fish)'"}},
		{"fish", []string{"complete -c ask", "-l provider -s p", "-l profile", "-l color -x -a 'auto always never'", "-a 'config'",
			"__fish_ask_at \\'/completion\\'' -f -a 'bash fish zsh'"}},
	}
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			r := runAsk(t, askEnv{}, "completion", tt.shell)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("the script lacks %q", w)
				}
			}
			// Every visible flag of the main command is offered.
			for _, f := range newApp(&IO{}).VisibleFlags() {
				name := f.Names()[0]
				if !strings.Contains(r.stdout, "--"+name) && !strings.Contains(r.stdout, "-l "+name) {
					t.Errorf("the script lacks --%s", name)
				}
			}
			// urfave/cli adds help commands to the app it runs; the script
			// is made from a fresh one, so none shows up.
			if strings.Contains(r.stdout, "completion/help") || strings.Contains(r.stdout, "'help h'") {
				t.Errorf("the script offers urfave/cli's help command")
			}
		})
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		if r := runAsk(t, askEnv{}, args...); r.code != exitUsage || !strings.Contains(r.stderr, "bash, zsh or fish") {
			t.Errorf("ask %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// The bash script really completes, in a bash.
func TestBashCompletionCompletes(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := filepath.Join(t.TempDir(), "ask.bash")
	r := runAsk(t, askEnv{}, "completion", "bash")
	os.WriteFile(script, []byte(r.stdout), 0o644)
	if out, err := exec.Command(bash, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	tests := []struct {
		words []string // the last is the word being completed
		want  string
	}{
		{[]string{"ask", "--pro"}, "--provider --profile"},
		{[]string{"ask", "--provider", "openr"}, "openrouter"},
		{[]string{"ask", "-p", "openai"}, "openai openai-responses"},
		{[]string{"ask", "--mode", ""}, "ask plan agent"},
		{[]string{"ask", "--color", "n"}, "never"},
		{[]string{"ask", "con"}, "config"},
		{[]string{"ask", "-m", "gpt", "con"}, "config"},
		{[]string{"ask", "why", "con"}, ""}, // a prompt, not a command
		{[]string{"ask", "completion", ""}, "bash zsh fish"},
		{[]string{"ask", "config", "--"}, "--json --profiles --profile --help"},
		{[]string{"ask", "replay", "--rec"}, "--recorded-results"},
	}
	for _, tt := range tests {
		var words []string
		for _, w := range tt.words {
			words = append(words, "'"+w+"'")
		}
		prog := `source "$1"; COMP_WORDS=(` + strings.Join(words, " ") + `); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _ask_completion; echo "${COMPREPLY[*]}"`
		out, err := exec.Command(bash, "-c", prog, "bash", script).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", tt.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tt.want {
			t.Errorf("%v completes to %q, want %q", tt.words, got, tt.want)
		}
	}
}
