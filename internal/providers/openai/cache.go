package openai

import (
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// markCache puts cache breakpoints on a request's messages, for the models
// behind OpenRouter that cache only what a request marks (Claude; Gemini
// reads the last mark): OpenRouter takes Anthropic's cache_control on text
// content parts and passes it on. The marks go, within Anthropic's four
// and counting those the conversation brought, on the last message, the
// previous request's last message (providers.CachePoints) and the system
// prompt, which the tools come before; every message but the model's goes
// in text parts (providers.TextBlocks). msgs, the system prompt first when
// hasSystem, is the request's own copy and is changed in place.
func markCache(msgs []json.RawMessage, hasSystem bool) {
	conv := msgs
	if hasSystem {
		conv = msgs[1:]
	}
	left := providers.MaxCacheMarks - providers.CountCacheMarks(conv)
	for i, m := range msgs {
		msgs[i] = providers.TextBlocks(m)
	}
	for _, i := range providers.CachePoints(conv) {
		if left <= 0 {
			return
		}
		if m, ok := providers.MarkLastBlock(conv[i], takesMark); ok {
			conv[i] = m
			left--
		}
	}
	if left > 0 && hasSystem {
		msgs[0], _ = providers.MarkLastBlock(msgs[0], takesMark)
	}
}

// takesMark: OpenRouter takes a breakpoint on a text part only, and an
// empty one caches nothing.
func takesMark(part gjson.Result) bool {
	return part.Get("type").String() == "text" && part.Get("text").String() != ""
}
