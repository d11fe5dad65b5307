package main

import (
	"runtime/debug"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestDescribeVersion(t *testing.T) {
	t.Parallel()
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name    string
		version string
		info    *debug.BuildInfo
		want    string
	}{
		{"no build info", "dev", nil, "dev"},
		{"no commit", "v1.2.0", &debug.BuildInfo{}, "v1.2.0"},
		{"commit", "v1.2.0", &debug.BuildInfo{Settings: vcs("0123456789abcdef0123", "false")}, "v1.2.0 (commit 0123456789ab)"},
		{"modified tree", "dev", &debug.BuildInfo{Settings: vcs("0123456789abcdef0123", "true")}, "dev (commit 0123456789ab, modified)"},
		{"short commit", "dev", &debug.BuildInfo{Settings: vcs("abc", "false")}, "dev (commit abc)"},
		{"go install module@version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, "v1.3.0"},
		{"local build", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"link-time version wins", "v2.0.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, "v2.0.0"},
	}
	for _, tt := range tests {
		if got := describeVersion(tt.version, tt.info); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

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

// TestNamesOf checks the CLI's own reading of flag names (namesOf, flagName) against
// urfave/cli's, for every flag of every command.
func TestNamesOf(t *testing.T) {
	t.Parallel()
	app := newApp(&IO{Getenv: func(string) string { return "" }})
	var walk func(path string, flags []cli.Flag, cmds []*cli.Command)
	walk = func(path string, flags []cli.Flag, cmds []*cli.Command) {
		for _, f := range flags {
			if got, want := namesOf(f), f.Names(); !slices.Equal(got, want) {
				t.Errorf("%s: namesOf %T = %q, Names() = %q", path, f, got, want)
			}
			if got, want := flagName(f), f.Names()[0]; got != want {
				t.Errorf("%s: flagName %T = %q, Names()[0] = %q", path, f, got, want)
			}
		}
		for _, c := range cmds {
			walk(path+" "+c.Name, c.Flags, c.Subcommands)
		}
	}
	walk("ask", app.Flags, app.Commands)
}
