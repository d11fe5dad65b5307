package ollama

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/tidwall/gjson"
)

// reply gathers one assistant message, from a single response object or from
// the lines of a stream, and renders it as a Turn.
type reply struct {
	content  strings.Builder
	thinking strings.Builder
	calls    []call
	usage    providers.Usage
	stop     string
}

// call is one tool call: what the loop sees and what goes back to the server.
type call struct {
	id, name string
	// text is the standardized Arguments: the raw JSON of the object.
	text string
	// echo is the arguments object sent back in history. It is text except
	// when a non-Ollama server sent a string (see parseCall).
	echo []byte
}

// add appends one message object (or one stream line's message) to the
// reply. source is the JSON the message came from: generated call ids hash
// it, so that replaying the same bytes gives the same ids.
func (r *reply) add(msg gjson.Result, source []byte) error {
	r.content.WriteString(msg.Get("content").String())
	r.thinking.WriteString(msg.Get("thinking").String())
	list := msg.Get("tool_calls")
	if !list.Exists() || list.Type == gjson.Null {
		return nil
	}
	if !list.IsArray() {
		return providers.Malformed("message.tool_calls is not an array")
	}
	var err error
	list.ForEach(func(_, tc gjson.Result) bool {
		var c call
		if c, err = parseCall(tc, source, len(r.calls)); err != nil {
			return false
		}
		r.calls = append(r.calls, c)
		return true
	})
	return err
}

// parseCall reads {"id"?, "function":{"index"?, "name", "arguments":{...}}}.
// index is the call's position in the whole reply, for generated ids.
func parseCall(tc gjson.Result, source []byte, index int) (call, error) {
	fn := tc.Get("function")
	c := call{id: providers.CallID(tc.Get("id").String()), name: fn.Get("name").String()}
	if c.name == "" {
		return call{}, providers.Malformed("tool call %d has no function name", index)
	}
	if c.id == "" {
		// Older servers send no ids; results must still name their call.
		c.id = providers.GeneratedID(source, index)
	}
	args := fn.Get("arguments")
	switch {
	case args.IsObject():
		c.text = args.Raw
		c.echo = []byte(args.Raw)
	case !args.Exists() || args.Type == gjson.Null:
		c.text = "{}"
		c.echo = []byte("{}")
	case args.Type == gjson.String:
		// Ollama itself never does this (its arguments type is an ordered
		// map), but a proxy might. Keep the text for the loop to judge; the
		// server only decodes an object, so echo one.
		c.text = args.Str
		c.echo = []byte("{}")
		if parsed := gjson.Parse(args.Str); gjson.Valid(args.Str) && parsed.IsObject() {
			c.echo = []byte(parsed.Raw)
		}
	default:
		return call{}, providers.Malformed("tool call %d (%s): arguments is a JSON %s, not an object", index, c.name, args.Type)
	}
	return c, nil
}

// finish reads the metrics of the final object: prompt_eval_count counts the
// prompt, eval_count the reply (thinking included); Ollama reports no cache
// or reasoning split.
func (r *reply) finish(root gjson.Result) {
	r.stop = root.Get("done_reason").String()
	in := int(root.Get("prompt_eval_count").Int())
	out := int(root.Get("eval_count").Int())
	r.usage = providers.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}

func (r *reply) turn() (*providers.Turn, error) {
	echo, err := r.echo()
	if err != nil {
		return nil, fmt.Errorf("ollama: assistant message: %w", err)
	}
	t := &providers.Turn{
		Text:       r.content.String(),
		Reasoning:  r.thinking.String(),
		Messages:   []json.RawMessage{echo},
		Usage:      r.usage,
		StopReason: r.stop,
	}
	for _, c := range r.calls {
		t.Calls = append(t.Calls, providers.ToolCall{ID: c.id, Name: c.name, Arguments: c.text})
	}
	return t, nil
}

// echo renders the assistant message for the next request the way Ollama's
// tool-calling docs do: content (always present: docs/openapi.yaml requires
// it, "" when the model said nothing), thinking when there was any, and the
// calls with their ids and OBJECT arguments.
func (r *reply) echo() (json.RawMessage, error) {
	msg := []byte(textMessage("assistant", r.content.String()))
	var err error
	if r.thinking.Len() > 0 {
		if msg, err = providers.SetRaw(msg, "thinking", providers.Quote(r.thinking.String())); err != nil {
			return nil, err
		}
	}
	if len(r.calls) == 0 {
		return msg, nil
	}
	items := make([]json.RawMessage, len(r.calls))
	for i, c := range r.calls {
		item, err := providers.SetRaw([]byte(`{"id":""}`), "id", providers.Quote(c.id))
		if err != nil {
			return nil, err
		}
		if item, err = providers.SetRaw(item, "function.name", providers.Quote(c.name)); err != nil {
			return nil, err
		}
		if item, err = providers.SetRaw(item, "function.arguments", c.echo); err != nil {
			return nil, err
		}
		items[i] = item
	}
	return providers.SetRaw(msg, "tool_calls", providers.JoinArray(items))
}
