package openai

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// partMarks lists the messages.N.content.M parts that carry cache_control.
func partMarks(body []byte) []string {
	var out []string
	gjson.GetBytes(body, "messages").ForEach(func(i, m gjson.Result) bool {
		m.Get("content").ForEach(func(j, p gjson.Result) bool {
			if p.Get("cache_control").Raw == `{"type":"ephemeral"}` {
				out = append(out, "messages."+i.String()+".content."+j.String())
			}
			return true
		})
		return true
	})
	return out
}

// TestCacheRequests pins the request forms of Request.Cache on the
// recorded OpenRouter second turn of a Claude model (system prompt, user
// prompt, one assistant message with two calls, two tool messages): marked,
// the system prompt, the last tool message and the previous request's last
// message (the prompt) become text parts with cache_control; a key is sent
// as prompt_cache_key. Every form must match OpenAI's own spec, which
// leaves content parts open to OpenRouter's extra field.
func TestCacheRequests(t *testing.T) {
	t.Parallel()
	spec := providertest.SpecPath(t, "openai-openapi.yaml")
	recorded := requestFrom(t, providertest.Read(t, "openrouter/fantasy-anthropic-multi-tool-turn2.request.json"))
	const key = "ask-0123456789abcdef0123456789abcdef"
	tests := []struct {
		name  string
		cache providers.Cache
		marks []string
	}{
		{"openrouter-claude-marked", providers.Cache{Mark: true}, []string{"messages.0.content.0", "messages.1.content.0", "messages.4.content.0"}},
		{"openai-keyed", providers.Cache{Key: key}, nil},
		{"off", providers.Cache{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := recorded
			r.Messages = slices.Clone(recorded.Messages)
			before := providertest.Marshal(t, r.Messages)
			r.Cache = tt.cache
			body, err := New().BuildRequest(r)
			if err != nil {
				t.Fatal(err)
			}
			if tt.name != "off" {
				providertest.Golden(t, "requests/cache-"+tt.name, body)
			}
			if got := partMarks(body); !slices.Equal(got, tt.marks) {
				t.Errorf("marks %v, want %v", got, tt.marks)
			}
			if got := gjson.GetBytes(body, "prompt_cache_key").String(); got != tt.cache.Key {
				t.Errorf("prompt_cache_key %q, want %q", got, tt.cache.Key)
			}
			if after := providertest.Marshal(t, r.Messages); string(after) != string(before) {
				t.Error("marking changed the conversation itself, which is echoed unmarked")
			}
			if err := providertest.ValidateSpec(t, spec, "CreateChatCompletionRequest", body); err != nil {
				t.Errorf("request does not match the spec: %v", err)
			}
		})
	}
}

// TestCacheMarkLimit: with the marks a conversation brought, the request
// never carries more than four.
func TestCacheMarkLimit(t *testing.T) {
	t.Parallel()
	marked := json.RawMessage(`{"role":"user","content":[{"type":"text","text":"earlier","cache_control":{"type":"ephemeral"}}]}`)
	reply := json.RawMessage(`{"role":"assistant","content":"ok"}`)
	for brought := 0; brought <= 5; brought++ {
		var msgs []json.RawMessage
		for range brought {
			msgs = append(msgs, marked, reply)
		}
		msgs = append(msgs, message("user", "now"))
		body, err := New().BuildRequest(providers.Request{Model: "anthropic/claude-sonnet-4.5", System: "s", Messages: msgs, Cache: providers.Cache{Mark: true}})
		if err != nil {
			t.Fatal(err)
		}
		got := len(partMarks(body))
		want := max(brought, min(brought+2, 4))
		if got != want {
			t.Errorf("%d marks brought: %d in the request, want %d", brought, got, want)
		}
	}
}
