package anthropic

import (
	"encoding/json"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// markCache puts cache breakpoints on the stable prefix of a request, as
// many as Anthropic takes less those the conversation already carries, in
// this order: the last message, the previous request's last message
// (providers.CachePoints), the system prompt, the last tool. Anthropic
// caches prefixes in the order tools, system, messages, so the system
// prompt's mark covers the tools too; the tools' own mark keeps them
// cached when only the system prompt changed (another directory, another
// day). The messages are copied before they are marked, each in text
// blocks (providers.TextBlocks): the conversation itself is echoed
// unmarked.
func markCache(msgs []json.RawMessage, system json.RawMessage, tools []json.RawMessage) ([]json.RawMessage, json.RawMessage, []json.RawMessage) {
	left := providers.MaxCacheMarks - providers.CountCacheMarks(msgs)
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		out[i] = providers.TextBlocks(m)
	}
	for _, i := range providers.CachePoints(out) {
		if left <= 0 {
			break
		}
		if m, ok := providers.MarkLastBlock(out[i], takesMark); ok {
			out[i] = m
			left--
		}
	}
	if left > 0 && system != nil {
		system = providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"text"`)},
			providers.Field{Key: "text", Value: system},
			providers.Field{Key: "cache_control", Value: providers.CacheMark})
		system = append(append(json.RawMessage{'['}, system...), ']')
		left--
	}
	if left > 0 && len(tools) > 0 {
		last := len(tools) - 1
		if marked, err := providers.SetRaw(tools[last], "cache_control", providers.CacheMark); err == nil {
			tools = append(slices.Clone(tools[:last]), marked)
		}
	}
	return out, system, tools
}

// takesMark tells the content blocks that can carry a breakpoint: not
// thinking blocks, nor an empty text block, which Anthropic refuses to
// mark.
func takesMark(block gjson.Result) bool {
	switch block.Get("type").String() {
	case "thinking", "redacted_thinking":
		return false
	case "text":
		return block.Get("text").String() != ""
	}
	return true
}
