package main

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

const redPrefix = "\033[1;31mask:\033[0m "

// Colour decorates stderr only: on a terminal by default, never in a
// pipe, never with NO_COLOR or --color never, always with --color always.
func TestErrorPrefixColour(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		tty      bool
		env      map[string]string
		config   string
		args     []string
		coloured bool
	}{
		{name: "terminal", tty: true, coloured: true},
		{name: "pipe", tty: false, coloured: false},
		{name: "NO_COLOR", tty: true, env: map[string]string{"NO_COLOR": "1"}, coloured: false},
		{name: "empty NO_COLOR is unset", tty: true, env: map[string]string{"NO_COLOR": ""}, coloured: true},
		{name: "dumb terminal", tty: true, env: map[string]string{"TERM": "dumb"}, coloured: false},
		{name: "--color never", tty: true, args: []string{"--color", "never"}, coloured: false},
		{name: "--color=never after the prompt", tty: true, args: []string{"--color=never"}, coloured: false},
		{name: "--color always in a pipe", tty: false, args: []string{"--color", "always"}, coloured: true},
		{name: "--color always over NO_COLOR", tty: true, env: map[string]string{"NO_COLOR": "1"}, args: []string{"--color", "always"}, coloured: true},
		{name: "--color auto keeps NO_COLOR", tty: true, env: map[string]string{"NO_COLOR": "1"}, args: []string{"--color", "auto"}, coloured: false},
		{name: "config never", tty: true, config: `{"color": "never"}`, coloured: false},
		{name: "config always in a pipe", tty: false, config: `{"color": "always"}`, coloured: true},
		{name: "NO_COLOR over config always", tty: true, env: map[string]string{"NO_COLOR": "1"}, config: `{"color": "always"}`, coloured: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.config != "" {
				writeConfig(t, home, tt.config)
			}
			env := map[string]string{"HOME": home}
			for k, v := range tt.env {
				env[k] = v
			}
			// An unknown provider is a usage error, reported by run.
			args := append([]string{"-p", "nope", "why?"}, tt.args...)
			r := runAsk(t, askEnv{env: env, tty: tt.tty}, args...)
			if r.code != exitUsage {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := strings.HasPrefix(r.stderr, redPrefix); got != tt.coloured {
				t.Errorf("coloured = %v, want %v: %q", got, tt.coloured, r.stderr)
			}
			if !tt.coloured && strings.Contains(r.stderr, "\033[") {
				t.Errorf("escape codes without colour: %q", r.stderr)
			}
		})
	}
}

// On a terminal the live status goes to stderr, dimmed, and the answer to
// stdout without escapes; in a pipe stderr stays empty; --quiet keeps
// stderr for errors only.
func TestTerminalVersusPipe(t *testing.T) {
	t.Parallel()
	replies := func() *fakeprovider.Server {
		return fakeprovider.Start(
			fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}},
			fakeprovider.Reply{Text: "done"})
	}
	tests := []struct {
		name       string
		tty        bool
		env        map[string]string
		args       []string
		wantStatus bool
		wantColour bool
	}{
		{name: "terminal", tty: true, wantStatus: true, wantColour: true},
		{name: "terminal with NO_COLOR", tty: true, env: map[string]string{"NO_COLOR": "1"}, wantStatus: true},
		{name: "terminal with --color never", tty: true, args: []string{"--color", "never"}, wantStatus: true},
		{name: "terminal with --quiet", tty: true, args: []string{"--quiet"}},
		{name: "pipe", tty: false},
		{name: "pipe with --color always", tty: false, args: []string{"--color", "always"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := replies()
			defer srv.Close()
			r := runAsk(t, askEnv{server: srv, tty: tt.tty, env: tt.env}, append([]string{"what is here?"}, tt.args...)...)
			if r.code != 0 || r.stdout != "done\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			hasStatus := strings.Contains(r.stderr, "step 1/100 · thinking") && strings.Contains(r.stderr, "step 1/100 · list_directory . ·")
			if hasStatus != tt.wantStatus {
				t.Errorf("status shown = %v, want %v: %q", hasStatus, tt.wantStatus, r.stderr)
			}
			if !tt.wantStatus && r.stderr != "" {
				t.Errorf("stderr %q, want nothing", r.stderr)
			}
			if got := strings.Contains(r.stderr, "\033[2m· step"); got != tt.wantColour {
				t.Errorf("dimmed status = %v, want %v: %q", got, tt.wantColour, r.stderr)
			}
			// The status is cleared at the end, and the run's summary
			// (usage_test.go) stands on its own line after it.
			status, summary, _ := strings.Cut(r.stderr, "ask: ")
			if tt.wantStatus && (!strings.HasSuffix(status, "\r\033[K") || !strings.Contains(summary, "2 steps")) {
				t.Errorf("the status line was not cleared before the summary: %q", r.stderr)
			}
		})
	}
}
