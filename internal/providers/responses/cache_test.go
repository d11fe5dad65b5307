package responses

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// TestCacheKey: a request that names its conversation sends the name as
// prompt_cache_key, which OpenAI's spec takes on CreateResponse (at most
// 64 characters); one that does not sends none.
func TestCacheKey(t *testing.T) {
	t.Parallel()
	user, _ := New().UserMessage("hi")
	for _, key := range []string{"ask-0123456789abcdef0123456789abcdef", ""} {
		body, err := New().BuildRequest(providers.Request{Model: "gpt-4o-mini", System: "s", Messages: []json.RawMessage{user},
			Cache: providers.Cache{Key: key, Mark: true}})
		if err != nil {
			t.Fatal(err)
		}
		got := gjson.GetBytes(body, "prompt_cache_key")
		if got.String() != key || got.Exists() != (key != "") {
			t.Errorf("key %q: prompt_cache_key %s", key, got.Raw)
		}
		if err := validateCreateResponse(t, body); err != nil {
			t.Errorf("key %q: %v", key, err)
		}
	}
}
