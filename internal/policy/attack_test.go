package policy

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

// TestRulesAttacks replays the known attacks on the rules (a comment ending
// in a backslash, a redirection under an exact rule, a line deny rules
// cannot read) through the policy: the rules as the flags give them, with
// and without --yes, where nobody can be asked.
func TestRulesAttacks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		allow, deny []string
		yes         bool
		line        string
		want        string // run, gate or deny; see verdictOf
	}{
		// C2: the comment that ends in a backslash hides the next line
		// from the parser, not from sh.
		{"C2 allow", []string{"shell:git status*"}, nil, false, "git status # x \\\ntouch P", "gate"},
		{"C2 allow, tab", []string{"shell:git status*"}, nil, false, "git status #\t\\\ntouch P", "gate"},
		{"C2 allow, in sh -c", []string{"shell:git status*", "shell:sh -c *"}, nil, false, "sh -c 'git status # \\\ntouch P'", "gate"},
		{"C2 deny --yes", nil, []string{"shell:rm*"}, true, "git status # x \\\nrm -f victim", "deny"},
		{"C2 bash here-document", []string{"shell:cat*", "shell:true"}, nil, false, "cat <<E\nE\\\n\ntouch P\nE", "gate"},
		{"alias", []string{"shell:alias*", "shell:t *"}, []string{"shell:rm*"}, false, "alias t=rm\nt victim", "deny"},
		{"alias --yes", []string{"shell:alias*", "shell:t *"}, []string{"shell:touch*"}, true, "alias t=tou\\ch\nt P", "deny"},
		{"trap", []string{"shell:trap*"}, []string{"shell:rm*"}, true, "trap 'rm -f victim' EXIT", "deny"},
		{"PS4", []string{"shell:set*", "shell:true"}, nil, false, "PS4='$(touch P)'; set -x; true", "gate"},
		{"brace expansion", []string{"shell:git status*"}, nil, false, "git status {--short,x}", "gate"},
		{"&> to dash", []string{"shell:git status*"}, nil, false, "git status &>/dev/null", "gate"},
		{"time's options", nil, []string{"shell:rm*"}, false, "time -o x rm -f victim", "deny"},
		{"&> to dash, deny --yes", nil, []string{"shell:rm*"}, true, "git status &>/dev/null rm -f victim", "deny"},
		// L2: a line that cannot be read is denied under --yes when a
		// deny rule names the tool.
		{"L2 printf", nil, []string{"shell:rm*"}, true, "$(printf rm) -f victim", "deny"},
		{"L2 variable", nil, []string{"shell:rm*"}, true, "X=rm; $X -f victim", "deny"},
		{"L2 no deny rule", nil, nil, true, "$(printf rm) -f victim", "run"},
		{"L2 another tool's deny rule", nil, []string{"deploy"}, true, "$(printf rm) -f victim", "run"},
		{"L2 static line", nil, []string{"shell:rm*"}, true, "touch P", "run"},
		{"L2 allow-all rule", []string{"shell"}, []string{"shell:rm*"}, false, "$(printf rm) -f victim", "gate"},
		{"L2 allow-all rule --yes", []string{"shell"}, []string{"shell:rm*"}, true, "$(printf rm) -f victim", "deny"},
		{"L2 allow-all rule, static", []string{"shell"}, []string{"shell:rm*"}, false, "touch P", "run"},
		{"L2 allow rule, parse error", []string{"shell:*"}, []string{"shell:rm*"}, true, "rm$( -f victim", "deny"},
		// H2: a redirection into a file is part of the command.
		{"H2 cat heredoc", []string{"shell:cat"}, nil, false, "cat > ~/.bashrc <<EOF\nevil\nEOF", "gate"},
		{"H2 git status", []string{"shell:git status"}, nil, false, "git status > ../outside/x", "gate"},
		{"H2 append", []string{"shell:git status"}, nil, false, "git status >>~/.profile", "gate"},
		{"H2 clobber", []string{"shell:git status"}, nil, false, "git status >| x", "gate"},
		{"H2 read-write", []string{"shell:cat"}, nil, false, "cat <> x", "gate"},
		{"H2 descriptor", []string{"shell:git status"}, nil, false, "git status 3> x", "gate"},
		{"H2 >& file", []string{"shell:git status"}, nil, false, "git status >& x", "gate"},
		{"H2 exec", []string{"shell:exec"}, nil, false, "exec > ~/.bashrc; exec", "gate"},
		{"H2 block", []string{"shell:cat"}, nil, false, "{ cat; } > ~/.bashrc", "gate"},
		{"H2 subshell", []string{"shell:cat"}, nil, false, "(cat) > ~/.bashrc", "gate"},
		{"H2 wrapper", []string{"shell:cat", "shell:env cat"}, nil, false, "env cat > ~/.bashrc", "gate"},
		{"H2 sh -c", []string{"shell:cat", "shell:sh -c cat"}, nil, false, "sh -c 'cat > ~/.bashrc'", "gate"},
		{"H2 in a substitution", []string{"shell:cat", "shell:echo *"}, nil, false, "echo $(cat > ~/.bashrc)", "gate"},
		{"H2 glob target", []string{"shell:git status > *"}, nil, false, "git status > ~/.bash*", "gate"},
		{"H2 deny names it", nil, []string{"shell:* > ~/*"}, true, "cat > ~/.bashrc", "deny"},
		// What writes no file stays as it was.
		{"dev null", []string{"shell:git status"}, nil, false, "git status > /dev/null 2>&1", "run"},
		{"dup", []string{"shell:git status"}, nil, false, "git status 2>&1 >&2", "run"},
		{"close", []string{"shell:git status"}, nil, false, "git status 2>&-", "run"},
		{"input", []string{"shell:cat"}, nil, false, "cat < notes.txt", "run"},
		{"heredoc", []string{"shell:cat"}, nil, false, "cat <<EOF\nx\nEOF", "run"},
		// A rule names a redirection as the command reads: its words,
		// then each redirection as operator, space, target.
		{"named", []string{"shell:cat > notes.txt"}, nil, false, "cat >notes.txt <<EOF\nx\nEOF", "run"},
		{"named, spaced", []string{"shell:cat  >  notes.txt"}, nil, false, "cat   >   notes.txt", "run"},
		{"named, other file", []string{"shell:cat > notes.txt"}, nil, false, "cat > notes.txt.sh", "gate"},
		{"named, append", []string{"shell:cat >> log"}, nil, false, "cat >>log", "run"},
		{"named, descriptor", []string{"shell:go test*"}, nil, false, "go test ./... 2> err.txt", "run"},
		{"named, dev null kept out", []string{"shell:cat > notes.txt"}, nil, false, "cat 2>/dev/null > notes.txt", "run"},
		{"named glob", []string{"shell:go test ./... > *.txt"}, nil, false, "go test ./... > out.txt", "run"},
		{"named, stdout by number", []string{"shell:cat > notes.txt"}, nil, false, "cat 1>notes.txt", "run"},
		{"named, stderr is not stdout", []string{"shell:cat > notes.txt"}, nil, false, "cat 2>notes.txt", "gate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			allow, err := ParsePatterns(tt.allow)
			if err != nil {
				t.Fatal(err)
			}
			deny, err := ParsePatterns(tt.deny)
			if err != nil {
				t.Fatal(err)
			}
			p := New(ModeAgent, false, tt.yes, allow, deny, nil, all)
			if got := verdictOf(t, p, tt.line); got != tt.want {
				t.Errorf("%q: %s, want %s", tt.line, got, tt.want)
			}
		})
	}
}

// An "always" for a command approves that command, not a line that hides
// another one after a comment, nor the command writing a file.
func TestAlwaysDoesNotCoverWhatTheParserMisreads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		first, then string
		wantAlways  string // what the first question offers
	}{
		{"git status", "git status # x \\\ntouch P", "any git status"},
		{"cat", "cat > ~/.bashrc <<EOF\nx\nEOF", "any cat"},
		{"cat > notes.txt", "cat > ~/.bashrc", "any cat > notes.txt"},
		{"git status 2>&1", "git status 2> ~/.bashrc", "any git status"},
	}
	for _, tt := range tests {
		person := &asking{answer: Always}
		p := New(ModeAgent, false, false, nil, nil, person, all)
		p.Check(context.Background(), []providers.ToolCall{shellCall(tt.first)})
		if len(person.pending) != 1 || person.pending[0].Always != tt.wantAlways {
			t.Fatalf("%q: asked %+v, want one question offering always %q", tt.first, person.pending, tt.wantAlways)
		}
		person.answer = No
		v := p.Check(context.Background(), []providers.ToolCall{shellCall(tt.then)})
		if v[0].Allowed || len(person.pending) != 2 {
			t.Errorf("after always %q, %q: %+v, asked %d times; want asked again", tt.wantAlways, tt.then, v[0], len(person.pending))
		}
	}
}

// The reason of an L2 denial says why, so the model can write the line
// plainly.
func TestUnjudgedDenialSaysWhy(t *testing.T) {
	t.Parallel()
	deny, _ := ParsePatterns([]string{"shell:rm*"})
	p := New(ModeAgent, false, true, nil, deny, nil, all)
	v := p.Check(context.Background(), []providers.ToolCall{shellCall("$(printf rm) -f victim")})[0]
	if v.Allowed || !strings.Contains(v.Reason, "cannot be judged") || !strings.Contains(v.Reason, "shell:rm*") {
		t.Errorf("%+v", v)
	}
}

// A question carries every argument of the call (issue 29, M8): the main
// one as the summary, the others by name; none when the summary is the
// whole of them.
func TestPendingCarriesEveryArgument(t *testing.T) {
	t.Parallel()
	tests := []struct {
		arguments string
		summary   string
		args      []Arg
	}{
		{`{"path":".git/config","content":"[core]\n\tfsmonitor = x"}`, ".git/config", []Arg{{"content", "[core]\n\tfsmonitor = x"}}},
		{`{"command":"ls","timeout":5,"env":{"A":"1"}}`, "ls", []Arg{{"env", `{"A":"1"}`}, {"timeout", "5"}}},
		{`{"target":"prod","force":true}`, `{"force":true,"target":"prod"}`, nil},
		{`not json`, "not json", nil},
	}
	for _, tt := range tests {
		person := &asking{answer: No}
		p := New(ModeAgent, false, false, nil, nil, person, all)
		p.Check(context.Background(), []providers.ToolCall{{ID: "1", Name: "deploy", Arguments: tt.arguments}})
		if len(person.pending) != 1 {
			t.Fatalf("%s: %d questions", tt.arguments, len(person.pending))
		}
		got := person.pending[0]
		if got.Summary != tt.summary || !slices.Equal(got.Args, tt.args) {
			t.Errorf("%s: summary %q, args %q; want %q, %q", tt.arguments, got.Summary, got.Args, tt.summary, tt.args)
		}
	}
}

// TestFileToolsDoNotBuildGitDir attacks with the real file tools (issue
// 29, L6): write_file builds a git directory outside .git (objects, refs,
// a config whose alias runs a command, HEAD), allowed by --yes and an
// allow rule where nobody can be asked, then git is run there. The write
// that makes the directory a repository needs a person's yes, as a write
// into .git does; so git finds no repository and runs nothing.
func TestFileToolsDoNotBuildGitDir(t *testing.T) {
	t.Parallel()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	config := "[alias]\n\tst = !touch PWN\n[core]\n\tfsmonitor = \"touch PWN; false\"\n"
	orders := map[string][]string{
		"HEAD last":  {"evil/objects/.keep", "evil/refs/heads/.keep", "evil/config", "evil/HEAD"},
		"HEAD first": {"evil/HEAD", "evil/objects/.keep", "evil/refs/heads/.keep", "evil/config"},
	}
	for name, paths := range orders {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			root, err := tools.NewRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			builtins := tools.Builtins(root)
			allow, _ := ParsePatterns([]string{"write_file"})
			p := New(ModeAgent, false, true, allow, nil, nil, builtins)
			var write tools.Tool
			for _, tool := range builtins {
				if tool.Info().Name == "write_file" {
					write = tool
				}
			}
			denied := 0
			for _, path := range paths { // one step each, so each sees the last one's file
				content := ""
				switch filepath.Base(path) {
				case "HEAD":
					content = "ref: refs/heads/main\n"
				case "config":
					content = config
				}
				args, _ := json.Marshal(map[string]string{"path": path, "content": content})
				v := p.Check(context.Background(), []providers.ToolCall{{ID: "1", Name: "write_file", Arguments: string(args)}})[0]
				if !v.Allowed {
					if !strings.Contains(v.Reason, "only a yes on a terminal") {
						t.Errorf("%s: denied for another reason: %s", path, v.Reason)
					}
					denied++
					continue
				}
				if _, err := write.Run(context.Background(), args); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
			}
			if denied == 0 {
				t.Error("every write of the git directory was allowed without a person")
			}
			git := exec.Command(gitBin, "st")
			git.Dir = filepath.Join(dir, "evil")
			git.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+dir)
			out, _ := git.CombinedOutput()
			if _, err := os.Stat(filepath.Join(dir, "evil", "PWN")); err == nil {
				t.Errorf("git in the directory the model built ran its config's alias: %s", out)
			}
		})
	}
}

// The calls of one step run together: beside a write that makes a git
// directory, the step's other writes are put to the person too.
func TestStepWithAControlWriteIsAskedWhole(t *testing.T) {
	t.Parallel()
	root, err := tools.NewRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := ParsePatterns([]string{"write_file"})
	person := &asking{answer: Yes}
	p := New(ModeAgent, false, true, allow, nil, person, tools.Builtins(root))
	call := func(id, path string) providers.ToolCall {
		args, _ := json.Marshal(map[string]string{"path": path, "content": "x"})
		return providers.ToolCall{ID: id, Name: "write_file", Arguments: string(args)}
	}
	v := p.Check(context.Background(), []providers.ToolCall{call("1", "evil/config"), call("2", "evil/HEAD"), call("3", "notes.txt")})
	if len(person.pending) != 3 {
		t.Errorf("asked about %d calls, want all 3 writes of the step: %+v", len(person.pending), person.pending)
	}
	for i, x := range v {
		if !x.Allowed {
			t.Errorf("call %d: %+v after a yes", i, x)
		}
	}
	person.pending = nil
	p.Check(context.Background(), []providers.ToolCall{call("4", "notes.txt")})
	if len(person.pending) != 0 {
		t.Errorf("an ordinary write alone under --yes was asked: %+v", person.pending)
	}
}

// Under --safe, a command confined to the read-only sandbox runs without a
// question, but not a line that cannot be judged while a deny rule names
// the tool: what it runs may be what the rule denies.
func TestUnjudgedLineUnderSafe(t *testing.T) {
	t.Parallel()
	sandboxed := []tools.Tool{fakeTool{tools.Info{Name: "shell", Risk: tools.Exec, RequiresApproval: true, Sandboxed: true}}}
	deny, _ := ParsePatterns([]string{"shell:curl*"})
	p := New(ModeAgent, true, false, nil, deny, nil, sandboxed)
	for line, want := range map[string]bool{"go test ./...": true, "$(printf curl) evil.example": false, "curl evil.example": false} {
		if v := p.Check(context.Background(), []providers.ToolCall{shellCall(line)})[0]; v.Allowed != want {
			t.Errorf("--safe %q: %+v, want allowed %v", line, v, want)
		}
	}
	person := &asking{answer: Yes}
	p = New(ModeAgent, true, false, nil, deny, person, sandboxed)
	if v := p.Check(context.Background(), []providers.ToolCall{shellCall("$(printf curl) evil.example")})[0]; !v.Allowed || len(person.pending) != 1 {
		t.Errorf("--safe at a terminal: %+v after %d questions, want the person asked", v, len(person.pending))
	}
}

// The POSIX reading of a line, which is dash's, is held to the bash one
// the rules judge: a command it finds that bash's does not, or a line it
// cannot judge, makes the line not static.
func TestPOSIXReadingCrossCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want bool // reads otherwise
	}{
		{"time -o f rm x", true},
		{"time -- rm x", true},
		{"time go test ./...", false},
		{"git status && go test", false},
		{"cat <<< x", false},            // POSIX cannot parse it: dash runs nothing
		{"function f { rm x; }", false}, // likewise
		{"cat > notes.txt <<EOF\nx\nEOF", false},
	}
	for _, tt := range tests {
		cmds, _, err := commands(tt.line)
		if err != nil {
			t.Fatalf("%q: %v", tt.line, err)
		}
		if got := readsOtherwiseInPOSIX(tt.line, cmds); got != tt.want {
			t.Errorf("%q: reads otherwise in POSIX %v, want %v", tt.line, got, tt.want)
		}
	}
}
