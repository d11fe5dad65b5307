package anthropic

import (
	"strings"
	"testing"

	"github.com/tidwall/sjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// TestUsageCacheFields reads the cache counts of recorded replies, streamed
// and not. The recordings were made without caching, so their zeros are
// replaced with the counts a cached step reports; input_tokens stays as
// recorded, and the usage's input is the whole prompt: input_tokens plus
// both cache counts.
func TestUsageCacheFields(t *testing.T) {
	t.Parallel()
	const recorded = `"cache_creation_input_tokens":0,"cache_read_input_tokens":0`
	const cached = `"cache_creation_input_tokens":300,"cache_read_input_tokens":1000`
	for _, fixture := range []string{
		"fantasy-sonnet4-tool.json", "pydantic-tool-with-thinking.json",
		"fantasy-sonnet4-tool-stream.sse", "fantasy-sonnet4-multi-tool-stream.sse",
	} {
		t.Run(fixture, func(t *testing.T) {
			body := providertest.Read(t, fixture)
			var withCache []byte
			if strings.HasSuffix(fixture, ".sse") {
				// message_start has the counts, and message_delta repeats them.
				if n := strings.Count(string(body), recorded); n != 2 {
					t.Fatalf("the stream holds the zero cache counts %d times, want 2", n)
				}
				withCache = []byte(strings.ReplaceAll(string(body), recorded, cached))
			} else {
				var err error
				withCache, err = sjson.SetBytes(body, "usage.cache_creation_input_tokens", 300)
				if err == nil {
					withCache, err = sjson.SetBytes(withCache, "usage.cache_read_input_tokens", 1000)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			turn, err := providers.ParseBody(New(), withCache)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := providers.ParseBody(New(), body)
			if err != nil {
				t.Fatal(err)
			}
			got, base := turn.Usage, plain.Usage
			if got.CacheReadTokens != 1000 || got.CacheWriteTokens != 300 {
				t.Errorf("cache read %d, write %d; want 1000 and 300", got.CacheReadTokens, got.CacheWriteTokens)
			}
			if got.InputTokens != base.InputTokens+1300 || got.TotalTokens != base.TotalTokens+1300 {
				t.Errorf("input %d, total %d; want the recorded %d and %d plus the 1300 cached", got.InputTokens, got.TotalTokens, base.InputTokens, base.TotalTokens)
			}
			if got.OutputTokens != base.OutputTokens || base.InputTokens == 0 {
				t.Errorf("output %d (recorded %d), recorded input %d", got.OutputTokens, base.OutputTokens, base.InputTokens)
			}
		})
	}
}
