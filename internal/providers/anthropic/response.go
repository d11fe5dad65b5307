package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// ParseResponse reads a non-streamed Messages response. The content array is
// echoed as received, byte for byte, unless a tool_use block lacked an id and
// one had to be written into it.
func (*Protocol) ParseResponse(body []byte) (*providers.Turn, error) {
	if !gjson.ValidBytes(body) {
		return nil, providers.Malformed("anthropic: response is not valid JSON")
	}
	doc := gjson.ParseBytes(body)
	if doc.Get("type").String() == "error" {
		if e := providers.StreamError(body); e != nil {
			return nil, e
		}
	}
	content := doc.Get("content")
	if !content.IsArray() {
		return nil, providers.Malformed("anthropic: response has no content array")
	}
	var blocks []json.RawMessage
	content.ForEach(func(_, b gjson.Result) bool {
		blocks = append(blocks, json.RawMessage(b.Raw))
		return true
	})
	turn, changed, err := readBlocks(blocks, nil, func() []byte { return body })
	if err != nil {
		return nil, err
	}
	if len(blocks) > 0 {
		raw := json.RawMessage(content.Raw)
		if changed {
			raw = providers.JoinArray(blocks)
		}
		msg, err := assistantMessage(raw)
		if err != nil {
			return nil, err
		}
		turn.Messages = []json.RawMessage{msg}
	}
	var u usage
	u.update(doc.Get("usage"))
	turn.Usage = u.standard()
	turn.StopReason = doc.Get("stop_reason").String()
	return turn, nil
}

// readBlocks reads text, reasoning and calls out of content blocks, in order.
// A tool_use block without an id gets one generated from seed (the reply's
// bytes), written into blocks[i] so that the echoed message and the call
// agree; changed reports that. rawArgs, when not nil, holds per block the
// arguments as the model streamed them, used instead of the block's input
// when not empty.
func readBlocks(blocks []json.RawMessage, rawArgs []string, seed func() []byte) (turn *providers.Turn, changed bool, err error) {
	turn = &providers.Turn{}
	var text, reasoning strings.Builder
	for i, raw := range blocks {
		b := gjson.ParseBytes(raw)
		switch b.Get("type").String() {
		case "text":
			text.WriteString(b.Get("text").String())
		case "thinking":
			reasoning.WriteString(b.Get("thinking").String())
		case "tool_use":
			name := b.Get("name").String()
			if name == "" {
				return nil, false, providers.Malformed("anthropic: tool_use block %d has no name", i)
			}
			id := b.Get("id").String()
			if id == "" {
				id = providers.GeneratedID(seed(), i)
				patched, err := providers.SetRaw(raw, "id", providers.Quote(id))
				if err != nil {
					return nil, false, providers.Malformed("anthropic: tool_use block %d: %v", i, err)
				}
				blocks[i], changed = patched, true
			}
			args := "{}"
			if in := b.Get("input"); in.Exists() && in.Type != gjson.Null {
				args = in.Raw
			}
			if rawArgs != nil && rawArgs[i] != "" {
				args = rawArgs[i]
			}
			turn.Calls = append(turn.Calls, providers.ToolCall{ID: id, Name: name, Arguments: args})
		}
	}
	turn.Text = text.String()
	turn.Reasoning = reasoning.String()
	return turn, changed, nil
}

// assistantMessage wraps a content array as the assistant turn to echo.
func assistantMessage(content json.RawMessage) (json.RawMessage, error) {
	msg, err := providers.SetRaw([]byte(`{"role":"assistant"}`), "content", content)
	if err != nil {
		return nil, providers.Malformed("anthropic: assistant message: %v", err)
	}
	return msg, nil
}

// usage holds Anthropic's token counts. input_tokens excludes the tokens
// read from and written to the cache, which come in their own fields;
// standard adds them back, so that input means the whole prompt.
type usage struct {
	input, cacheRead, cacheCreation, output, thinking int
}

// update takes the fields present in a usage object; a stream's
// message_delta repeats some of message_start's and carries the cumulative
// output count.
func (u *usage) update(r gjson.Result) {
	set := func(path string, dst *int) {
		if v := r.Get(path); v.Exists() && v.Type == gjson.Number {
			*dst = int(v.Int())
		}
	}
	set("input_tokens", &u.input)
	set("cache_read_input_tokens", &u.cacheRead)
	set("cache_creation_input_tokens", &u.cacheCreation)
	set("output_tokens", &u.output)
	set("output_tokens_details.thinking_tokens", &u.thinking)
}

func (u usage) standard() providers.Usage {
	in := u.input + u.cacheRead + u.cacheCreation
	return providers.Usage{
		InputTokens:      in,
		OutputTokens:     u.output,
		CacheReadTokens:  u.cacheRead,
		CacheWriteTokens: u.cacheCreation,
		ReasoningTokens:  u.thinking,
		TotalTokens:      in + u.output,
	}
}
