package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// ParseResponse implements providers.Protocol for a non-streamed body.
func (*Protocol) ParseResponse(body []byte) (*providers.Turn, error) {
	if !gjson.ValidBytes(body) {
		return nil, providers.Malformed("openai: response is not JSON")
	}
	if e := providers.StreamError(body); e != nil {
		return nil, e
	}
	root := gjson.ParseBytes(body)
	choice, ok := firstChoice(root.Get("choices"))
	if !ok {
		return nil, providers.Malformed("openai: response has no choices")
	}
	// OpenRouter documents an error object on the choice itself.
	if e := providers.StreamError([]byte(choice.Raw)); e != nil {
		return nil, e
	}
	msg := choice.Get("message")
	if !msg.IsObject() {
		return nil, providers.Malformed("openai: choices[0].message is not an object")
	}

	t := &providers.Turn{
		Text:       contentText(msg.Get("content")),
		Reasoning:  reasoningText(msg),
		StopReason: choice.Get("finish_reason").String(),
		Usage:      parseUsage(root.Get("usage")),
	}
	echo, calls, err := echoMessage(msg, func(i int) string { return providers.GeneratedID(body, i) })
	if err != nil {
		return nil, err
	}
	t.Calls = calls
	t.Messages = []json.RawMessage{echo}
	return t, nil
}

// firstChoice returns the choice with index 0 (servers asked for one choice
// send one; the index key may be missing).
func firstChoice(choices gjson.Result) (gjson.Result, bool) {
	if !choices.IsArray() {
		return gjson.Result{}, false
	}
	var found gjson.Result
	ok := false
	choices.ForEach(func(_, c gjson.Result) bool {
		if !c.IsObject() {
			return true
		}
		if idx := c.Get("index"); idx.Exists() && idx.Int() != 0 {
			return true
		}
		found, ok = c, true
		return false
	})
	return found, ok
}

// contentText reads content as a string, null, or an array of text parts.
func contentText(c gjson.Result) string {
	switch {
	case c.Type == gjson.String:
		return c.String()
	case c.IsArray():
		var b strings.Builder
		c.ForEach(func(_, part gjson.Result) bool {
			if t := part.Get("type").String(); t == "" || t == "text" {
				b.WriteString(part.Get("text").String())
			}
			return true
		})
		return b.String()
	}
	return ""
}

// reasoningText is the reasoning to show the user: reasoning_content
// (DeepSeek, Moonshot, llama.cpp), else OpenRouter's reasoning string, else
// the text of OpenRouter's reasoning_details.
func reasoningText(msg gjson.Result) string {
	if s := msg.Get("reasoning_content").String(); s != "" {
		return s
	}
	if s := msg.Get("reasoning").String(); s != "" {
		return s
	}
	var b strings.Builder
	msg.Get("reasoning_details").ForEach(func(_, d gjson.Result) bool {
		b.WriteString(d.Get("text").String())
		b.WriteString(d.Get("summary").String())
		return true
	})
	return b.String()
}

// parseUsage reads usage in the dialects seen: cached tokens under
// prompt_tokens_details (OpenAI, OpenRouter), top-level cached_tokens
// (Moonshot) or prompt_cache_hit_tokens (DeepSeek); prompt_tokens includes
// them in all of these. OpenRouter adds cache_write_tokens beside
// cached_tokens, and its cost.
func parseUsage(u gjson.Result) providers.Usage {
	if !u.IsObject() {
		return providers.Usage{}
	}
	cached := u.Get("prompt_tokens_details.cached_tokens")
	if !cached.Exists() || cached.Type == gjson.Null {
		cached = u.Get("cached_tokens")
	}
	if !cached.Exists() || cached.Type == gjson.Null {
		cached = u.Get("prompt_cache_hit_tokens")
	}
	return providers.Usage{
		InputTokens:      int(u.Get("prompt_tokens").Int()),
		OutputTokens:     int(u.Get("completion_tokens").Int()),
		CacheReadTokens:  int(cached.Int()),
		CacheWriteTokens: int(u.Get("prompt_tokens_details.cache_write_tokens").Int()),
		ReasoningTokens:  int(u.Get("completion_tokens_details.reasoning_tokens").Int()),
		TotalTokens:      int(u.Get("total_tokens").Int()),
		Cost:             providers.ReportedCost(u.Get("cost")),
	}
}

// responseOnly are message fields that describe a response and have no
// place in a request (annotations are url citations; audio would need
// rewriting to {id}, and ask never asks for audio).
var responseOnly = map[string]bool{"annotations": true, "audio": true}

// echoMessage renders the assistant message to send back next turn from
// the reply's message object, and reads its calls. Fields are kept raw and
// in their order; null fields and response-only fields are dropped;
// tool_calls entries go through fixCall. newID names a call at a position
// that came without an id.
func echoMessage(msg gjson.Result, newID func(int) string) (json.RawMessage, []providers.ToolCall, error) {
	var calls []providers.ToolCall
	var fixed []json.RawMessage
	if tc := msg.Get("tool_calls"); tc.Exists() && tc.Type != gjson.Null {
		if !tc.IsArray() {
			return nil, nil, providers.Malformed("openai: message.tool_calls is not an array")
		}
		var err error
		tc.ForEach(func(_, entry gjson.Result) bool {
			var raw json.RawMessage
			var c providers.ToolCall
			raw, c, err = fixCall(entry, len(calls), newID)
			if err != nil {
				return false
			}
			fixed = append(fixed, raw)
			calls = append(calls, c)
			return true
		})
		if err != nil {
			return nil, nil, err
		}
	}

	b := make([]byte, 0, len(msg.Raw)+64)
	b = append(b, '{')
	field := func(key string, raw []byte) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, key...)
		b = append(b, ':')
		b = append(b, raw...)
	}
	if msg.Get("role").String() != "assistant" {
		field(`"role"`, []byte(`"assistant"`))
	}
	hasContent := false
	msg.ForEach(func(k, v gjson.Result) bool {
		name := k.String()
		switch {
		case v.Type == gjson.Null || responseOnly[name]:
		case name == "role" && v.String() != "assistant":
		case name == "tool_calls":
			if len(fixed) > 0 {
				field(k.Raw, providers.JoinArray(fixed))
			}
		default:
			hasContent = hasContent || name == "content"
			field(k.Raw, []byte(v.Raw))
		}
		return true
	})
	// Content may only be left out next to tool calls.
	if !hasContent && len(calls) == 0 {
		field(`"content"`, []byte(`""`))
	}
	return append(b, '}'), calls, nil
}

// fixCall checks one tool_calls entry and returns it ready to echo, with
// the standardized call. The entry stays byte for byte except: a missing or
// empty id gets a generated one, an id with bytes that are not UTF-8 is
// spelled as JSON spells them (providers.CallID), missing or empty
// arguments become "{}" (as in the standardized call), a missing type
// becomes "function", and the chunk-only "index" key is removed so that
// echoes from streams and from whole responses match.
func fixCall(entry gjson.Result, i int, newID func(int) string) (json.RawMessage, providers.ToolCall, error) {
	if !entry.IsObject() {
		return nil, providers.ToolCall{}, providers.Malformed("openai: tool call %d is not an object", i)
	}
	fn := entry.Get("function")
	c := providers.ToolCall{ID: entry.Get("id").String(), Name: fn.Get("name").String()}
	if c.Name == "" {
		return nil, c, providers.Malformed("openai: tool call %d has no function name", i)
	}
	raw := []byte(entry.Raw)
	var err error
	set := func(path string, v any) {
		if err == nil {
			raw, err = providers.Set(raw, path, v)
		}
	}
	if c.ID == "" {
		c.ID = newID(i)
		set("id", c.ID)
	}
	if valid := providers.CallID(c.ID); valid != c.ID {
		c.ID = valid
		set("id", c.ID)
	}
	if !entry.Get("type").Exists() {
		set("type", "function")
	}
	args := fn.Get("arguments")
	switch {
	case args.Type == gjson.String:
		c.Arguments = args.String()
	case args.IsObject() || args.IsArray():
		// Not what the spec says, but keep what the model produced.
		c.Arguments = args.Raw
	}
	if strings.TrimSpace(c.Arguments) == "" {
		c.Arguments = "{}"
		set("function.arguments", "{}")
	}
	if err == nil && entry.Get("index").Exists() {
		raw, err = sjson.DeleteBytes(raw, "index")
		if err != nil {
			err = fmt.Errorf("delete index: %w", err)
		}
	}
	if err != nil {
		return nil, c, fmt.Errorf("openai: tool call %d: %w", i, err)
	}
	return raw, c, nil
}
