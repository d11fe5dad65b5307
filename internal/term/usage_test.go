package term

import (
	"testing"

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
			if got := RunSummary(tt.steps, tt.usage); got != tt.want {
				t.Errorf("RunSummary = %q, want %q", got, tt.want)
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
		if got := StepUsage(tt.usage); got != tt.want {
			t.Errorf("StepUsage = %q, want %q", got, tt.want)
		}
	}
}
