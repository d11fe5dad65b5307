package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// commandPaths are the full names of the main command and every command
// under it that does work (not the ones that only group others).
func commandPaths(t *testing.T) []string {
	t.Helper()
	app := newApp(&IO{})
	paths := []string{"ask"}
	var walk func(cmds []*cli.Command, path string)
	walk = func(cmds []*cli.Command, path string) {
		for _, c := range cmds {
			full := path + " " + c.Name
			if len(c.Subcommands) == 0 {
				paths = append(paths, full)
			}
			walk(c.Subcommands, full)
		}
	}
	walk(app.Commands, "ask")
	return paths
}

func helpOf(t *testing.T, path string) string {
	t.Helper()
	args := append(strings.Fields(path)[1:], "--help")
	r := runAsk(t, askEnv{}, args...)
	if r.code != 0 {
		t.Fatalf("%s --help: exit %d: %s", path, r.code, r.stderr)
	}
	return r.stdout
}

// TestHelpDefaults: a switch does not say "(default: false)", and no flag
// gives two defaults ("(default: the provider's own) (default: 0)").
func TestHelpDefaults(t *testing.T) {
	t.Parallel()
	for _, path := range append(commandPaths(t), "ask provider", "ask tools") {
		help := helpOf(t, path)
		for _, line := range strings.Split(help, "\n") {
			if strings.Contains(line, "(default: false)") {
				t.Errorf("%s --help: %q", path, line)
			}
			if strings.Count(line, "(default:") > 1 {
				t.Errorf("%s --help gives two defaults: %q", path, line)
			}
		}
	}
	if main := helpOf(t, "ask"); !strings.Contains(main, "--max-tokens N  ") || !regexp.MustCompile(`--max-tokens N +cap each model reply at N tokens \(default: the provider's own\)\n`).MatchString(main) {
		t.Errorf("ask --help: --max-tokens is not shown with its one default:\n%s", main)
	}
	if main := helpOf(t, "ask"); !regexp.MustCompile(`--max-steps value +stop after this many model requests; plan mode's default is 20, and ask mode allows at most 3 \(default: 100\)\n`).MatchString(main) {
		t.Errorf("ask --help lost a real default (--max-steps 100)")
	}
}

// TestHelpExamples: the main command's help and every stage's ends with
// two or three examples, each a command line that runs ask.
func TestHelpExamples(t *testing.T) {
	t.Parallel()
	paths := commandPaths(t)
	for name := range examples() {
		if !slices.Contains(paths, name) {
			t.Errorf("examples for %q, which is not a command", name)
		}
	}
	for _, path := range paths {
		help := helpOf(t, path)
		_, after, ok := strings.Cut(help, "Examples:\n")
		if !ok {
			t.Errorf("%s --help has no examples", path)
			continue
		}
		var lines []string
		for _, l := range strings.Split(after, "\n") {
			if !strings.HasPrefix(l, "      ") {
				break
			}
			lines = append(lines, strings.TrimSpace(l))
		}
		if len(lines) < 2 || len(lines) > 3 {
			t.Errorf("%s --help has %d examples, want 2 or 3: %q", path, len(lines), lines)
		}
		words := strings.Fields(path)
		for _, l := range lines {
			if !strings.Contains(l, "ask ") || !strings.Contains(l, " "+words[len(words)-1]) && path != "ask" {
				t.Errorf("%s --help: example %q does not run %s", path, l, path)
			}
		}
	}
}

// TestGroupUsage: a command that groups others says COMMAND where the
// command goes, not [command options].
func TestGroupUsage(t *testing.T) {
	t.Parallel()
	for _, group := range []string{"provider", "tools", "sandbox"} {
		help := helpOf(t, "ask "+group)
		usage, _, _ := strings.Cut(strings.SplitN(help, "USAGE:\n", 2)[1], "\n")
		if strings.Contains(usage, "[command options]") {
			t.Errorf("ask %s usage: %q", group, usage)
		}
		if group != "sandbox" && !strings.Contains(usage, "ask "+group+" COMMAND") {
			t.Errorf("ask %s usage does not name COMMAND: %q", group, usage)
		}
	}
}

// TestToolsQueryHelp: tools list and show run nothing, so their help does
// not offer --yes and --timeout; tools run does.
func TestToolsQueryHelp(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"list", "show"} {
		help := helpOf(t, "ask tools "+sub)
		for _, flag := range []string{"--yes", "--timeout"} {
			if strings.Contains(help, flag) {
				t.Errorf("ask tools %s --help lists %s, which it ignores", sub, flag)
			}
		}
		if !strings.Contains(help, "--mode") {
			t.Errorf("ask tools %s --help lost --mode", sub)
		}
	}
	run := helpOf(t, "ask tools run")
	if !strings.Contains(run, "--yes") || !strings.Contains(run, "--timeout") {
		t.Errorf("ask tools run --help lacks --yes or --timeout")
	}
	// Still accepted, so a run's command line can be reused.
	if r := runAsk(t, askEnv{}, "tools", "list", "--yes", "--timeout", "1m", "--json"); r.code != 0 {
		t.Errorf("tools list --yes --timeout 1m: exit %d: %s", r.code, r.stderr)
	}
}

// TestErrorsSayAskOnce: a message that starts with a command's path does
// not repeat "ask" after the "ask:" prefix.
func TestErrorsSayAskOnce(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"provider", "frobnicate"},
		{"provider", "send", "a.json", "b.json"},
		{"provider", "append", "request.json"},
		{"tools", "list", "extra"},
	} {
		r := runAsk(t, askEnv{}, args...)
		if r.code != 2 || strings.Contains(r.stderr, "ask: ask ") || !strings.HasPrefix(r.stderr, "ask: "+args[0]) {
			t.Errorf("ask %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	// A message that merely starts with the word is left alone.
	if got := errorLine("ask mode allows 3 steps"); got != "ask mode allows 3 steps" {
		t.Errorf("errorLine cut a message that names no command: %q", got)
	}
}

func TestQuietAndVerboseRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-q", "-v", "hi"}, {"-qv", "hi"}, {"--quiet", "--verbose", "hi"}, {"replay", "-q", "-v"}} {
		r := runAsk(t, askEnv{}, args...)
		if r.code != 2 || r.stderr != "ask: -q (--quiet) and -v (--verbose) ask for opposite things: choose one\n" {
			t.Errorf("ask %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}
