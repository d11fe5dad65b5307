package main

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
)

// TestKnobErrorFromEitherCommand: a knob's value the provider does not
// take, given as --flag=value, is a usage error on one line from the main
// command and from `ask provider request` alike, and nothing is sent. (The
// knobs' checks are internal/run's TestKnobErrors.)
func TestKnobErrorFromEitherCommand(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "never"})
	defer srv.Close()
	for _, args := range [][]string{
		{"-p", "openai", "--temperature=-0.1", "hi"},
		{"provider", "request", "-p", "openai", "--temperature=-0.1", "hi"},
	} {
		r := runAsk(t, askEnv{server: srv}, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "openai takes 0 to 2") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("ask %v: exit %d, stderr %q; want exit 2 and one line", args, r.code, r.stderr)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
