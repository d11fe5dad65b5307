package main

import (
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/settings"
)

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	r := runAsk(t, askEnv{}, "--version")
	if want := "ask version " + versionString() + "\n"; r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Errorf("--version: exit %d, stdout %q (want %q), stderr %q", r.code, r.stdout, want, r.stderr)
	}
	// -v is --verbose, not --version.
	if r := runAsk(t, askEnv{}, "-v"); r.code != exitUsage {
		t.Errorf("-v alone: exit %d, want the usage error for a missing prompt", r.code)
	}
}

// TestSubcommandsDeclareNoRunFlag checks that no subcommand declares a
// setting of the main command: they read those through the context
// lineage, so that a flag means the same before or after their names.
// A subcommand's own --json is its own output, not the run's. `ask replay`
// is the exception DESIGN §4 makes: the policy of a replay is given to
// replay itself (--yes, rules, --safe, the sandbox), never taken from the
// config file's settings for runs, and the argv pass gives those flags to
// it wherever they are typed.
func TestSubcommandsDeclareNoRunFlag(t *testing.T) {
	t.Parallel()
	app := newApp(&IO{Getenv: func(string) string { return "" }})
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			if path == "ask" && c.Name == "replay" {
				continue
			}
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					if r, ok := settings.Lookup(n); ok && r.IsSetting() {
						t.Errorf("%s %s declares --%s, a setting of the main command", path, c.Name, n)
					}
				}
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("ask", app.Commands)
}
