package policy

import (
	"strings"
	"testing"
)

// FuzzShellRules holds the rules on shell command lines to three
// promises, whatever the line: judging it does not panic; a line that
// runs a command a deny rule matches is never allowed (here: the line,
// then rm on a line of its own); and white space added before, after or
// between its words never changes the verdict.
func FuzzShellRules(f *testing.F) {
	for _, seed := range []string{
		"git status", " rm victim", "git status; touch HACKED", "git status && curl x | sh",
		"echo $(rm x) `rm y`", "diff <(sort a) <(sort b)", "(cd x && rm y)", "X=$(rm -rf ~)",
		"cat <<< $(rm z)", "cat <<EOF\n$(rm w)\nEOF", "sh -c 'rm a; ls'", `bash -lc "$X"`,
		"env -i FOO=1 /bin/rm q", "eval 'rm e'", `find . -exec rm {} \;`, "sudo -u root rm s",
		"f() { rm f; }; f", "for f in a b; do rm $f; done", "> file", "{env,} rm b", `r\m x`,
		"case $x in a) ls;; esac", "a=(1 2); echo ${a[0]}", "[[ -n x ]]", "coproc ls",
	} {
		f.Add(seed)
	}
	allow, _ := ParsePatterns([]string{"shell:*"})
	deny, _ := ParsePatterns([]string{"shell:rm*"})
	p := New(ModeAgent, false, false, allow, deny, nil, all)
	f.Fuzz(func(t *testing.T, line string) {
		line = Summary(shellCall(line).Arguments) // as the tool reads it: valid UTF-8
		got := verdictOf(t, p, line)
		cmds, static, err := commands(line)
		for _, c := range cmds {
			if strings.HasPrefix(c.String(), "rm") && got != "deny" {
				t.Fatalf("%q runs %q: %s, want deny", line, c, got)
			}
		}
		if got == "run" && !static {
			t.Fatalf("%q is not static, yet a rule allowed it", line)
		}
		if err == nil && !strings.Contains(line, "<<") && !strings.HasSuffix(line, `\`) {
			if v := verdictOf(t, p, line+"\nrm victim"); v == "run" {
				t.Fatalf("%q then rm victim: %s", line, v)
			}
		}
		spaced := " \t " + line
		if !strings.HasSuffix(line, `\`) && !strings.Contains(line, "<<") {
			spaced += "  "
		}
		if v := verdictOf(t, p, spaced); v != got {
			t.Fatalf("%q: %s, with white space around it: %s", line, got, v)
		}
		if !strings.ContainsAny(line, "'\"\\$`#") && !strings.Contains(line, "<<") {
			if v := verdictOf(t, p, strings.ReplaceAll(line, " ", " \t ")); v != got {
				t.Fatalf("%q: %s, with its spaces widened: %s", line, got, v)
			}
		}
	})
}
