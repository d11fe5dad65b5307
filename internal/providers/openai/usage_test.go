package openai

import (
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// TestUsageCacheFields reads the cache counts and OpenRouter's cost from
// recorded replies. prompt_tokens includes the cached tokens in every
// dialect, so input is prompt_tokens as reported. The OpenRouter recording
// of a Claude model was made without caching: its zero counts are replaced
// with a cached step's.
func TestUsageCacheFields(t *testing.T) {
	t.Parallel()
	cost := func(c float64) *float64 { return &c }
	claude := providertest.Read(t, "openrouter/fantasy-anthropic-multi-tool.json")
	cachedClaude, err := sjson.SetBytes(claude, "usage.prompt_tokens_details.cached_tokens", 600)
	if err == nil {
		cachedClaude, err = sjson.SetBytes(cachedClaude, "usage.prompt_tokens_details.cache_write_tokens", 50)
	}
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		body []byte
		want providers.Usage
	}{
		{"deepseek: prompt_cache_hit_tokens and cached_tokens", providertest.Read(t, "deepseek/pydantic-reasoner-tool-3-final.json"),
			providers.Usage{InputTokens: 976, OutputTokens: 61, CacheReadTokens: 896, ReasoningTokens: 25, TotalTokens: 1037}},
		{"openrouter kimi stream: cached tokens and cost", providertest.Read(t, "openrouter/fantasy-kimi-multi-tool-stream.sse"),
			providers.Usage{InputTokens: 125, OutputTokens: 97, CacheReadTokens: 64, ReasoningTokens: 56, TotalTokens: 222, Cost: cost(0.00023492)}},
		{"openrouter claude: cache reads and writes", cachedClaude,
			providers.Usage{InputTokens: 690, OutputTokens: 120, CacheReadTokens: 600, CacheWriteTokens: 50, TotalTokens: 810, Cost: cost(0.00129)}},
		{"openai: no cost", providertest.Read(t, "openai-chat/fantasy-gpt4o-tool.json"),
			providers.Usage{InputTokens: 61, OutputTokens: 16, TotalTokens: 77}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn, err := providers.ParseBody(New(), tt.body)
			if err != nil {
				t.Fatal(err)
			}
			providertest.SameJSON(t, "usage", providertest.Marshal(t, turn.Usage), providertest.Marshal(t, tt.want))
		})
	}
}

// TestUsageCost: a free model's cost of 0 is a cost known, unlike none.
func TestUsageCost(t *testing.T) {
	t.Parallel()
	free := parseUsage(gjson.Parse(`{"prompt_tokens":43,"completion_tokens":10,"total_tokens":53,"cost":0}`))
	if free.Cost == nil || *free.Cost != 0 {
		t.Errorf("cost 0: Cost = %v, want a known 0", free.Cost)
	}
	for _, u := range []string{`{"prompt_tokens":1}`, `{"prompt_tokens":1,"cost":null}`, `{"prompt_tokens":1,"cost":"0.1"}`} {
		if got := parseUsage(gjson.Parse(u)).Cost; got != nil {
			t.Errorf("%s: Cost = %v, want none", u, *got)
		}
	}
}
