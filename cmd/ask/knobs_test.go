package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
)

// TestKnobErrors: a knob the provider does not have, or a value it does not
// take, is a usage error (exit 2) naming what to change, found before a
// missing key, and nothing is sent.
func TestKnobErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"temperature above the range", []string{"-p", "openai", "--temperature", "2.5"}, "--temperature 2.5 (flag --temperature): openai takes 0 to 2"},
		{"negative temperature", []string{"-p", "openai", "--temperature=-0.1"}, "openai takes 0 to 2"},
		{"anthropic's range", []string{"-p", "anthropic", "--temperature", "1.5"}, "anthropic takes 0 to 1"},
		{"moonshot's range", []string{"-p", "moonshot", "--temperature", "1.2"}, "moonshot takes 0 to 1"},
		{"unknown level", []string{"-p", "openai", "--reasoning", "extreme"}, `--reasoning "extreme" (flag --reasoning): choose low, medium, high`},
		{"no reasoning setting", []string{"-p", "moonshot", "--reasoning", "low"}, "--reasoning: moonshot has no reasoning setting"},
		{"a local program takes neither", []string{"-p", "command", "--command", "cat", "--temperature", "0.5"}, "--temperature: command takes no temperature"},
		{"a local program has no reasoning", []string{"-p", "command", "--command", "cat", "--reasoning", "high"}, "--reasoning: command has no reasoning setting"},
		{"thinking with a temperature", []string{"-p", "anthropic", "--reasoning", "low", "--temperature", "0.5"}, "takes no temperature but 1, got 0.5"},
		{"a Gemini model that does not think", []string{"-p", "gemini", "-m", "gemini-2.0-flash", "--reasoning", "low"}, "gemini-2.0-flash has no thinking to configure"},
		{"a level Gemini 3 Pro does not take", []string{"-p", "gemini", "-m", "gemini-3-pro-preview", "--reasoning", "medium"}, "takes a thinking level of low or high"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "never"})
			defer srv.Close()
			// Only openai has a key: a flag to fix comes before a key to set.
			env := askEnv{server: srv}
			for _, args := range [][]string{
				append(append([]string{}, tt.args...), "hi"),
				append(append([]string{"provider", "request"}, tt.args...), "hi"),
			} {
				r := runAsk(t, env, args...)
				if r.code != exitUsage || !strings.Contains(r.stderr, tt.wantErr) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
					t.Errorf("ask %v: exit %d, stderr %q; want exit 2 and one line with %q", args, r.code, r.stderr, tt.wantErr)
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// TestKnobsFromConfigAndRecorded: the config file sets the knobs (a flag
// wins), `ask config` shows where each came from, run.started records them
// and a replay sends them again (--check compares every rebuilt request
// with the recorded one).
func TestKnobsFromConfigAndRecorded(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeConfig(t, home, `{"temperature": 0.4, "reasoning": "low"}`)
	env := map[string]string{"HOME": home}

	cfg := askConfig(t, env, "--temperature", "0.6")
	if got := cfg.Settings["temperature"]; got.Value != 0.6 || got.Source != "flag --temperature" {
		t.Errorf("ask config temperature = %+v; want 0.6 from the flag", got)
	}
	if got := cfg.Settings["reasoning"]; got.Value != "low" || !strings.HasPrefix(got.Source, "config ") {
		t.Errorf("ask config reasoning = %+v; want low from the file", got)
	}

	srv := fakeprovider.Start(fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	wd := t.TempDir()
	transcript := filepath.Join(wd, "run.jsonl")
	r := runAsk(t, askEnv{env: env, server: srv, wd: wd}, "--reasoning", "high", "--transcript", transcript, "hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	sent := gjson.ParseBytes(srv.Requests()[0])
	if sent.Get("temperature").Float() != 0.4 || sent.Get("reasoning_effort").String() != "high" {
		t.Errorf("sent temperature %s, reasoning_effort %s; want 0.4 from the file and high from the flag", sent.Get("temperature").Raw, sent.Get("reasoning_effort").Raw)
	}
	events := readTranscript(t, transcript)
	set := events[0].Settings
	if set == nil || set.Temperature == nil || *set.Temperature != 0.4 || set.Reasoning != "high" {
		t.Fatalf("run.started settings = %+v; want temperature 0.4, reasoning high", set)
	}
	replay := runAsk(t, askEnv{wd: wd}, "replay", "--check", transcript)
	if replay.code != 0 || replay.stdout != "done\n" {
		t.Errorf("replay --check: exit %d, stdout %q, stderr %s", replay.code, replay.stdout, replay.stderr)
	}
}
