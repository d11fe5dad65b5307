//go:build unix

package policy

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// FuzzParserAgainstSh runs what the fuzzer makes up through /bin/sh -x and
// bash -x, and holds the parser to them: a line the rules call static runs
// no program that the parser did not see. Only lines that cannot harm the
// machine are run (see harmless): a few words, no file written but by
// touch in an empty directory, no functions, no loops that need not end.
func FuzzParserAgainstSh(f *testing.F) {
	for _, seed := range []string{
		"true # x \\\ntouch P", "true #\\\ntouch P", "true <<E\nE\\\n\ntouch P\nE",
		"true \\\ntouch P", "true <<E\nx\nE\ntouch P", "true `echo \\`touch P\\``",
		"case x in x) true;; esac; touch P", "true $(case x in x) true;; esac; touch P)",
		"time -o x touch P", "alias t=touch\nt P", "true &>x touch P", "trap 'touch P' EXIT",
		"true &\ntouch P", "true a\u00a0;touch P", "true {x,touch} P", "true 'a\\\nb' # c\\\\\ntouch P",
		"echo \"$(echo ')'; touch P)\"", "true <<-E\n\tx\n\tE\ntouch P", "true\r\ntouch P",
		"if true; then touch P; fi", "for x in a b; do true; done", "{ true; } ; touch P",
	} {
		f.Add(seed)
	}
	shs := []string{"/bin/sh"}
	if bash := lookBash(); bash != "" {
		shs = append(shs, bash)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if !harmless(line) {
			return
		}
		progs, static := parserRuns(line)
		if !static {
			return // never allowed by a rule
		}
		for i, p := range progs {
			progs[i] = firstToken(p)
		}
		for _, sh := range shs {
			for _, p := range shRuns(t, sh, line) {
				if p == "touch P" {
					continue // the file P: with > in the line, not only touch makes it
				}
				// Not a name in the line: an error message that a
				// background command's output broke into the trace.
				// time is dash's program and bash's keyword: the parser
				// sees what it times (its options are not static).
				if p = firstToken(p); p != "" && p != "time" && strings.Contains(line, p) && !slices.Contains(progs, p) {
					t.Fatalf("%s runs %s in %q, which the rules read as static and running only %q", sh, p, line, progs)
				}
			}
		}
	})
}

// fuzzWords are the only words a fuzzed line may hold: builtins that do
// nothing outside the shell, touch and time (run in an empty directory),
// wrappers of these, names no program has, and the keywords of bounded
// compound commands.
var fuzzWords = map[string]bool{
	"true": true, "false": true, "echo": true, "printf": true, "touch": true, "P": true, "E": true,
	"x": true, "y": true, "a": true, "b": true, "c": true,
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true, "in": true, "esac": true,
	"for": true, "do": true, "done": true,
	"time": true, "o": true, "p": true, "command": true, "exec": true, "env": true, "alias": true, "trap": true,
	"set": true, "EXIT": true, "local": true, "export": true,
}

// harmless reports whether a fuzzed line is safe to give a real shell:
// short; only the words above; no /, ., ~ or 0, so no path but in the
// empty directory (a redirection writes there), no sourced file and no
// $0; no function (name()), so no fork bomb; no while or until, so every
// loop ends.
func harmless(line string) bool {
	if len(line) > 200 {
		return false
	}
	for _, r := range line {
		switch {
		case r < 0x80 && (unicode.IsLetter(r) || r >= '1' && r <= '9'):
		case strings.ContainsRune(" \t\n\r\v\f\\#;&|'\"(){}$`<>=,*?!-:\u00a0\u2028\u3000\u0085", r):
		default:
			return false
		}
	}
	words := strings.FieldsFunc(line, func(r rune) bool { return !(r < 0x80 && unicode.IsLetter(r)) })
	for _, w := range words {
		if !fuzzWords[w] {
			return false
		}
	}
	squeezed := strings.NewReplacer("\\\n", "", "\\\r", "", " ", "", "\t", "", "\n", "", "\r", "", "\v", "", "\f", "").Replace(line)
	return !strings.Contains(squeezed, "()")
}

// firstToken is a program name's first word, quotes taken off: how dash's
// trace (which splits a name with a space in it) and bash's (which quotes
// it) both show it.
func firstToken(s string) string {
	f := strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" \t\n'\"", r) })
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// lookBash is bash's path, "" when there is none.
func lookBash() string {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return ""
	}
	return bash
}
