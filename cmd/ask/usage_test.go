package main

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

func TestRunSummary(t *testing.T) {
	t.Parallel()
	cost := func(c float64) *float64 { return &c }
	tests := []struct {
		name  string
		steps int
		usage providers.Usage
		want  string
	}{
		{"cached and priced", 4, providers.Usage{InputTokens: 18240, OutputTokens: 612, CacheReadTokens: 14800, Cost: cost(0.01316)},
			"4 steps · 18,240 tokens in (81% from cache), 612 out · $0.0132"},
		{"nothing cached, no cost", 1, providers.Usage{InputTokens: 950, OutputTokens: 20},
			"1 step · 950 tokens in, 20 out"},
		{"a free model's cost", 2, providers.Usage{InputTokens: 1000, OutputTokens: 1, CacheReadTokens: 999, Cost: cost(0)},
			"2 steps · 1,000 tokens in (99% from cache), 1 out · $0.0000"},
		{"a tiny cost", 2, providers.Usage{InputTokens: 10, OutputTokens: 1, Cost: cost(0.00001)},
			"2 steps · 10 tokens in, 1 out · <$0.0001"},
		{"a large cost", 3, providers.Usage{InputTokens: 1234567, OutputTokens: 1000, Cost: cost(123.456)},
			"3 steps · 1,234,567 tokens in, 1,000 out · $123.46"},
		{"no usage reported", 2, providers.Usage{}, "2 steps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runSummary(tt.steps, tt.usage); got != tt.want {
				t.Errorf("runSummary = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStepUsage(t *testing.T) {
	t.Parallel()
	cost := 0.0021
	tests := []struct {
		usage providers.Usage
		want  string
	}{
		{providers.Usage{InputTokens: 5200, OutputTokens: 80, CacheReadTokens: 4000, CacheWriteTokens: 1100, Cost: &cost},
			"5,200 tokens in (4,000 read from cache, 1,100 written to it), 80 out, $0.0021"},
		{providers.Usage{InputTokens: 1200, OutputTokens: 7, CacheWriteTokens: 1100}, "1,200 tokens in (1,100 written to it), 7 out"},
		{providers.Usage{InputTokens: 12, OutputTokens: 7}, "12 tokens in, 7 out"},
	}
	for _, tt := range tests {
		if got := stepUsage(tt.usage); got != tt.want {
			t.Errorf("stepUsage = %q, want %q", got, tt.want)
		}
	}
}

// TestRunSummaryOnlyOnATerminal: the line ends a run whose stderr is a
// terminal, not one whose stderr is a file or a pipe, nor a quiet one;
// -v shows each step's usage wherever stderr goes.
func TestRunSummaryOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	replies := func() []fakeprovider.Reply {
		return []fakeprovider.Reply{
			{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}},
			{Text: "done"},
		}
	}
	const summary = "ask: 2 steps · 200 tokens in, 40 out"
	tests := []struct {
		name      string
		tty       bool
		args      []string
		want      bool
		stepLines bool
	}{
		{"terminal", true, nil, true, false},
		{"not a terminal", false, nil, false, false},
		{"quiet terminal", true, []string{"-q"}, false, false},
		{"--json on a terminal", true, []string{"--json"}, true, false},
		{"verbose, not a terminal", false, []string{"-v"}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(replies()...)
			defer srv.Close()
			r := runAsk(t, askEnv{server: srv, tty: tt.tty, env: map[string]string{"NO_COLOR": "1"}}, append(tt.args, "list it")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := strings.Contains(r.stderr, summary); got != tt.want {
				t.Errorf("summary shown %v, want %v; stderr:\n%s", got, tt.want, r.stderr)
			}
			if strings.Contains(r.stdout, "tokens in") {
				t.Errorf("the summary reached stdout: %q", r.stdout)
			}
			if got := strings.Count(r.stderr, "tokens in, 20 out"); tt.stepLines && got != 2 {
				t.Errorf("-v: %d step usage lines, want 2; stderr:\n%s", got, r.stderr)
			}
		})
	}
}
