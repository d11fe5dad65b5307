package gemini

import (
	"testing"

	"github.com/tidwall/sjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// TestUsageCachedContent reads cachedContentTokenCount from a recorded
// reply (recorded without a cache hit, so the count is set here):
// promptTokenCount already includes the cached tokens, so input stays as
// reported and the cached ones are a part of it.
func TestUsageCachedContent(t *testing.T) {
	t.Parallel()
	body := providertest.Read(t, "fantasy-3pro-multi-tool.json")
	cached, err := sjson.SetBytes(body, "usageMetadata.cachedContentTokenCount", 256)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := providers.ParseBody(New(), cached)
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Usage{InputTokens: 299, OutputTokens: 32 + 495, CacheReadTokens: 256, ReasoningTokens: 495, TotalTokens: 826}
	if turn.Usage != want {
		t.Errorf("usage = %+v, want %+v", turn.Usage, want)
	}
}
