package completion

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// tiny is a program with a flag of every kind, a command with an alias
// and a subcommand, and a command with fixed arguments.
func tiny() *Command {
	return &Command{
		Name: "tiny",
		Flags: []Flag{
			{Names: []string{"color", "c"}, Usage: "when: auto or never", TakesValue: true, Values: []string{"auto", "never"}},
			{Names: []string{"out"}, Usage: "write to FILE", TakesValue: true, Placeholder: "FILE", Kind: File},
			{Names: []string{"dir"}, Usage: "work in [DIR]", TakesValue: true, Kind: Dir},
			{Names: []string{"tag", "t"}, Usage: "a tag; repeatable", TakesValue: true, Repeatable: true},
			{Names: []string{"verbose"}, Usage: "say what's done"},
			{Names: []string{"profile"}, Usage: "a profile", TakesValue: true, ValuesFrom: "printf 'dev\\nprod\\n'"},
		},
		Subcommands: []*Command{
			{Name: "remote", Aliases: []string{"r"}, Usage: "manage: remotes", Flags: []Flag{{Names: []string{"json"}, Usage: "print JSON"}},
				Subcommands: []*Command{{Name: "add", Usage: "add a remote", Flags: []Flag{{Names: []string{"name"}, TakesValue: true}}}}},
			{Name: "shell", Usage: "print a script", Args: []string{"sh", "bash"}},
		},
	}
}

func TestScripts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		shell  string
		script func(*Command) string
		want   []string
	}{
		{"bash", Bash, []string{
			"complete -o default -F _tiny_completion tiny",
			`"/remote"|"/shell"|"/remote/add") path="$path/$word"`,
			`--color|-c) COMPREPLY=($(compgen -W "auto never" -- "$cur")); return 0 ;;`,
			`--out) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;`,
			`--dir) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;`,
			`--tag|-t|--name) COMPREPLY=(); return 0 ;;`,
			`"") flags="--color -c --out --dir --tag -t --verbose --profile"; words="remote shell" ;;`,
			`"/r") path="/remote" ;;`,
			`--profile) COMPREPLY=($(compgen -W "$(printf 'dev\nprod\n' 2>/dev/null)" -- "$cur")); return 0 ;;`,
			`"/remote") flags="--json"; words="add" ;;`,
			`"/remote/add") flags="--name"; words="" ;;`,
			`"/shell") flags=""; words="sh bash" ;;`,
		}},
		{"zsh", Zsh, []string{
			"#compdef tiny",
			`'(--color -c)'{--color,-c}'[when\: auto or never]:color:(auto never)'`,
			`'--out[write to FILE]:file:_files'`,
			`'--dir[work in \[DIR\]]:dir:_files -/'`,
			`'*'{--tag,-t}'[a tag; repeatable]:tag: '`,
			`'--verbose[say what'\''s done]'`,
			`'remote:manage\: remotes'`,
			"remote|r) _tiny_remote && ret=0 ;;",
			"add) _tiny_remote_add && ret=0 ;;",
			"_tiny_remote_add() {",
			"'1:value:(sh bash)'",
			"compdef _tiny tiny",
			`'--profile[a profile]:profile:{compadd -- ${(f)"$(printf '\''dev\nprod\n'\'' 2>/dev/null)"}}'`,
		}},
		{"fish", Fish, []string{
			"case '--color' '-c' '--out' '--dir' '--tag' '-t' '--profile' '--name'\n                set skip 1",
			"case '/remote' '/r'\n                set path '/remote'",
			"case '/remote/add'\n                set path '/remote/add'",
			`complete -c tiny -n '__fish_tiny_in \'\'' -l color -s c -x -a 'auto never' -d 'when: auto or never'`,
			"-l out -r -F -d",
			"-l dir -x -a '(__fish_complete_directories)'",
			"-l tag -s t -x -d",
			`-l verbose -f -d 'say what\'s done'`,
			`-l profile -x -a '(printf \'dev\\nprod\\n\' 2>/dev/null)'`,
			`complete -c tiny -n '__fish_tiny_at \'\'' -f -a 'remote' -d 'manage: remotes'`,
			`-n '__fish_tiny_in \'/remote\'' -l json -f`,
			`-n '__fish_tiny_at \'/remote\'' -f -a 'add'`,
			`-n '__fish_tiny_in \'/remote/add\'' -l name -x`,
			`-n '__fish_tiny_at \'/shell\'' -f -a 'bash sh'`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			t.Parallel()
			script := tt.script(tiny())
			for _, w := range tt.want {
				if !strings.Contains(script, w) {
					t.Errorf("the script lacks %s", w)
				}
			}
			if sh, err := exec.LookPath(tt.shell); err == nil {
				if out, err := exec.Command(sh, "-n", "-c", script).CombinedOutput(); err != nil {
					t.Errorf("%s -n: %v\n%s", tt.shell, err, out)
				}
			}
		})
	}
}

// The bash script completes the tiny program in a bash.
func TestBashCompletes(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := filepath.Join(t.TempDir(), "tiny.bash")
	if err := os.WriteFile(script, []byte(Bash(tiny())), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		words []string // the last is the word being completed
		want  string
	}{
		{[]string{"tiny", "--c"}, "--color"},
		{[]string{"tiny", "-c", ""}, "auto never"},
		{[]string{"tiny", ""}, "remote shell"},
		{[]string{"tiny", "--tag", "x", "re"}, "remote"},
		{[]string{"tiny", "prompt", "re"}, ""},
		{[]string{"tiny", "remote", ""}, "add"},
		{[]string{"tiny", "remote", "add", "--"}, "--name"},
		{[]string{"tiny", "shell", "b"}, "bash"},
		{[]string{"tiny", "r", "a"}, "add"},
		{[]string{"tiny", "--profile", "p"}, "prod"},
	}
	for _, tt := range tests {
		var words []string
		for _, w := range tt.words {
			words = append(words, "'"+w+"'")
		}
		prog := `source "$1"; COMP_WORDS=(` + strings.Join(words, " ") + `); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _tiny_completion; echo "${COMPREPLY[*]}"`
		out, err := exec.Command(bash, "-c", prog, "bash", script).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", tt.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tt.want {
			t.Errorf("%v completes to %q, want %q", tt.words, got, tt.want)
		}
	}
}

// The fish script completes the tiny program in a fish: a command only
// where one goes, never a prompt's word.
func TestFishCompletes(t *testing.T) {
	t.Parallel()
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("no fish")
	}
	script := filepath.Join(t.TempDir(), "tiny.fish")
	if err := os.WriteFile(script, []byte(Fish(tiny())), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string
		want []string // the completions' words, sorted
	}{
		{"tiny ", []string{"remote", "shell"}},
		{"tiny --c", []string{"--color"}},
		{"tiny -c ", []string{"auto", "never"}},
		{"tiny --tag remote ", []string{"remote", "shell"}},
		{"tiny prompt remote ", nil},
		{"tiny prompt --v", []string{"--verbose"}},
		{"tiny remote ", []string{"add"}},
		{"tiny r ", []string{"add"}},
		{"tiny remote add --", []string{"--name"}},
		{"tiny remote add x ", nil},
		{"tiny shell ", []string{"bash", "sh"}},
		{"tiny --profile ", []string{"dev", "prod"}},
	}
	for _, tt := range tests {
		// Files are completed where nothing else is; the script's own
		// directory holds only the script.
		cmd := exec.Command(fish, "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, tt.line)
		cmd.Dir = filepath.Dir(script)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", tt.line, err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if w, _, _ := strings.Cut(l, "\t"); w != "" && w != "tiny.fish" {
				got = append(got, w)
			}
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%q completes to %q, want %q", tt.line, got, tt.want)
		}
	}
}
