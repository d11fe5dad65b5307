package main

import (
	"strings"
	"testing"
)

// An unknown flag is a usage error whose hint names the whole command.
func TestUnknownFlagNamesTheCommand(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		hint string
	}{
		{[]string{"--nope", "q"}, ": see ask --help"},
		{[]string{"replay", "--nope"}, ": see ask replay --help"},
		{[]string{"provider", "format-tools", "--nope"}, ": see ask provider format-tools --help"},
		{[]string{"tools", "run", "--nope"}, ": see ask tools run --help"},
		{[]string{"tools", "run", "--timout", "1s"}, "--timout: did you mean --timeout?"},
		{[]string{"replay", "--chek"}, "--chek: did you mean --check?"},
	} {
		r := runAsk(t, askEnv{stdin: "[]"}, tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "unknown flag --") || !strings.HasSuffix(strings.TrimSpace(r.stderr), tt.hint) {
			t.Errorf("ask %s: exit %d, stderr %q; want %d ending %q", strings.Join(tt.args, " "), r.code, r.stderr, exitUsage, tt.hint)
		}
	}
}
