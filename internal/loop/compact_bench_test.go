package loop_test

import (
	"testing"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
)

// BenchmarkCompactionCost is BENCHMARKS.md's cost figure: the input tokens
// a long run (generated, and the longest recorded one) is billed for under an 8,000-token window with compaction,
// against the same run under a model with no window (nothing compacted),
// and the share of the input read from the prompt cache in the requests
// after the first compaction. The fake's cache serves the longest prefix a
// request shares with an earlier one, as a provider's prompt cache does
// (without its block granularity).
func BenchmarkCompactionCost(b *testing.B) {
	b.Run("generated-120", func(b *testing.B) { compactionCost(b, newAgentRun(120, 7), nil) })
	b.Run("recorded-188", func(b *testing.B) { compactionCost(b, loadRecordedRun(b, "session-188"), builtinDeclarations(b)) })
}

func compactionCost(b *testing.B, run agentRun, tools []providers.Tool) {
	for range b.N {
		open := runWindowed(b, "openai", 1<<30, run, loop.Config{Tools: tools})
		compacted := runWindowed(b, "openai", testWindow, run, loop.Config{Window: testWindow, Tools: tools})
		if open.res.Status != loop.StatusCompleted || compacted.res.Status != loop.StatusCompleted {
			b.Fatalf("statuses %s and %s", open.res.Status, compacted.res.Status)
		}
		full, small := open.model.Bill(), compacted.model.Bill()
		// The requests after the first compaction: the first request whose
		// input is smaller than the one before it.
		after, cached, input := -1, 0, 0
		for i, c := range small.Each {
			if after < 0 && i > 0 && c.Input < small.Each[i-1].Input {
				after = i
			}
			if after >= 0 {
				cached += c.Cached
				input += c.Input
			}
		}
		b.ReportMetric(float64(full.InputTokens), "nowindow-input-tokens")
		b.ReportMetric(float64(small.InputTokens), "compacted-input-tokens")
		b.ReportMetric(float64(small.InputTokens)/float64(full.InputTokens), "compacted/nowindow")
		b.ReportMetric(float64(full.CachedTokens)/float64(full.InputTokens), "nowindow-cache-share")
		b.ReportMetric(float64(cached)/float64(max(input, 1)), "cache-share-after-compaction")
		b.ReportMetric(float64(len(compacted.res.Compactions)), "compactions")
	}
}
