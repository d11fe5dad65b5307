package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
)

// TestKnobErrorFromEitherCommand: a knob's value out of its row's range,
// given as --flag=value, is a usage error on one line from the main
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
		if r.code != exitUsage || !strings.Contains(r.stderr, "--temperature -0.1: give a number from 0 to 2") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("ask %v: exit %d, stderr %q; want exit 2 and one line", args, r.code, r.stderr)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// -a and --attach=FILE both add a file to the prompt. (What is sent, and
// what a provider refuses, is internal/run's TestAttachFlag.)
func TestAttachFlagForms(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "internal", "providers", "testdata", "attach"))
	png, pdf := filepath.Join(dir, "pixel.png"), filepath.Join(dir, "tiny.pdf")
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "a pixel"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv}, "-a", png, "--attach="+pdf, "what is this?")
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0]), `"type":"file"`) || !strings.Contains(string(reqs[0]), `"image_url":{"url":"data:image/png;base64,`) {
		t.Errorf("requests %d, the first without the files", len(reqs))
	}
}
