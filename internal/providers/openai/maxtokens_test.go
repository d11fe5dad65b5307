package openai

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

func TestMaxTokensField(t *testing.T) {
	tests := []struct {
		model string
		want  string
	}{
		{"gpt-4o", "max_tokens"},
		{"gpt-4o-mini-2024-07-18", "max_tokens"},
		{"gpt-4.1", "max_tokens"},
		{"gpt-3.5-turbo", "max_tokens"},
		{"gpt-oss:20b", "max_tokens"},
		{"openai/gpt-oss-20b", "max_tokens"},
		{"deepseek-reasoner", "max_tokens"},
		{"kimi-k2-0905-preview", "max_tokens"},
		{"anthropic/claude-haiku-4.5", "max_tokens"},
		{"qwen3", "max_tokens"},
		{"omni-moderation-latest", "max_tokens"},
		{"", "max_tokens"},
		{"o1", "max_completion_tokens"},
		{"o1-mini", "max_completion_tokens"},
		{"o3-mini-2025-01-31", "max_completion_tokens"},
		{"o4-mini", "max_completion_tokens"},
		{"gpt-5", "max_completion_tokens"},
		{"gpt-5-mini-2025-08-07", "max_completion_tokens"},
		{"gpt-5.1", "max_completion_tokens"},
		{"GPT-5-Nano", "max_completion_tokens"},
		{"gpt-6", "max_completion_tokens"},
		{"openai/gpt-5.4-nano", "max_completion_tokens"},
		{"openai/o3", "max_completion_tokens"},
	}
	for _, tt := range tests {
		if got := maxTokensField(tt.model); got != tt.want {
			t.Errorf("maxTokensField(%q) = %s, want %s", tt.model, got, tt.want)
		}
	}
}

// TestMaxTokensInBody checks that the cap reaches the body under the field
// the model wants, and only that one.
func TestMaxTokensInBody(t *testing.T) {
	user := json.RawMessage(`{"role":"user","content":"hi"}`)
	for model, field := range map[string]string{"gpt-4o-mini": "max_tokens", "o3": "max_completion_tokens", "gpt-5-mini": "max_completion_tokens"} {
		body, err := New().BuildRequest(providers.Request{Model: model, Messages: []json.RawMessage{user}, MaxTokens: 512})
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(body, field).Int(); got != 512 {
			t.Errorf("%s: %s = %d in %s", model, field, got, body)
		}
		other := "max_tokens"
		if field == other {
			other = "max_completion_tokens"
		}
		if gjson.GetBytes(body, other).Exists() {
			t.Errorf("%s: body also has %s: %s", model, other, body)
		}
		unset, _ := New().BuildRequest(providers.Request{Model: model, Messages: []json.RawMessage{user}})
		if gjson.GetBytes(unset, "max_tokens").Exists() || gjson.GetBytes(unset, "max_completion_tokens").Exists() {
			t.Errorf("%s: a cap was sent without MaxTokens: %s", model, unset)
		}
	}
}
