package loop_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// recordedUsage pairs each recorded request of the protocols' fixtures with
// the input tokens its recorded response reports.
func recordedUsage(t *testing.T) map[string][3]int {
	t.Helper()
	out := map[string][3]int{}
	for _, protocol := range []string{"openai", "responses", "anthropic", "gemini", "ollama"} {
		p, err := catalog.NewProtocol(protocol)
		if err != nil {
			t.Fatal(err)
		}
		reqs, _ := filepath.Glob(filepath.Join("..", "providers", protocol, "testdata", "*.request.json"))
		for _, req := range reqs {
			base := strings.TrimSuffix(req, ".request.json")
			for _, ext := range []string{".json", ".sse", ".ndjson", ".stream-array.json"} {
				body, err := os.ReadFile(base + ext)
				if err != nil {
					continue
				}
				turn, err := providers.ParseBody(p, body)
				if err != nil || turn.Usage.InputTokens == 0 {
					continue
				}
				reqBody, err := os.ReadFile(req)
				if err != nil {
					t.Fatal(err)
				}
				out[protocol+"/"+filepath.Base(base)] = [3]int{len(reqBody), turn.Usage.InputTokens}
			}
		}
	}
	return out
}

// The estimate a run makes of a request, against the input tokens the
// provider reported for it, over every recorded request of the protocols'
// fixtures. Uncalibrated (bytes alone) it errs high, except where a
// provider adds a hidden prompt of its own (Anthropic's tool-use system
// prompt, a few hundred tokens) to a small request; once the first reply's
// usage has counted the first request, as in a run, the next request of the same
// conversation is estimated within [0.9, 2] of what the provider counted,
// so that a run compacts early rather than late.
func TestEstimateAgainstRecordedUsage(t *testing.T) {
	t.Parallel()
	usage := recordedUsage(t)
	if len(usage) < 20 {
		t.Fatalf("only %d recorded requests with usage", len(usage))
	}
	pairs := 0
	for name, next := range usage {
		est, reported := loop.Estimate(0, 0, next[0]), next[1]
		if next[0] >= 2000 && float64(est) < 0.85*float64(reported) {
			t.Errorf("%s: estimated %d tokens, reported %d: a request of %d bytes estimated low", name, est, reported, next[0])
		}
		first, ok := usage[strings.TrimSuffix(strings.TrimSuffix(name, "-turn2"), "-2")]
		if !ok || first == next {
			continue
		}
		pairs++
		calibrated := loop.Estimate(first[0], first[1], next[0])
		if r := float64(calibrated) / float64(reported); r < 0.9 || r > 5 {
			t.Errorf("%s: calibrated estimate %d, reported %d (ratio %.2f)", name, calibrated, reported, r)
		}
	}
	if pairs < 5 {
		t.Errorf("only %d follow-up requests to check the calibration on", pairs)
	}
}
