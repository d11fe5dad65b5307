package responses

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// turnFromItems reads a response's output items, in output order, into the
// text, calls and replay history of a turn. Streamed and plain responses both
// end here, so they echo the same history. The package comment explains
// which items are echoed and how.
func turnFromItems(items []gjson.Result) (*providers.Turn, error) {
	t := &providers.Turn{}
	var text, reasoning []string
	// pending holds echoed reasoning items until the item that followed
	// them is known to be echoed as well.
	var pending []json.RawMessage
	keep := func(item json.RawMessage) {
		t.Messages = append(t.Messages, pending...)
		t.Messages = append(t.Messages, item)
		pending = nil
	}
	for i, item := range items {
		switch item.Get("type").String() {
		case "reasoning":
			reasoning = append(reasoning, reasoningText(item)...)
			if enc := item.Get("encrypted_content"); enc.Type == gjson.String && enc.String() != "" {
				echo, err := echoReasoning(item)
				if err != nil {
					return nil, err
				}
				pending = append(pending, echo)
			}
		case "function_call":
			call, echo, err := functionCall(item, len(t.Calls))
			if err != nil {
				return nil, providers.Malformed("responses: output item %d: %v", i, err)
			}
			t.Calls = append(t.Calls, call)
			keep(echo)
		case "message":
			said, echo, err := message(item)
			if err != nil {
				return nil, err
			}
			text = append(text, said)
			keep(echo)
		default:
			// Not echoed; a reasoning item waiting for it would arrive
			// without its following item, so it goes too.
			pending = nil
		}
	}
	t.Text = strings.Join(text, "")
	t.Reasoning = strings.Join(reasoning, "\n\n")
	return t, nil
}

// functionCall reads one function_call item into a standardized call and the
// item to echo: {type, call_id, name, arguments}, without the "fc_" id. The
// model's call_id and arguments are echoed as the exact JSON tokens received.
func functionCall(item gjson.Result, index int) (providers.ToolCall, json.RawMessage, error) {
	name := item.Get("name")
	if name.Type != gjson.String || name.String() == "" {
		return providers.ToolCall{}, nil, errors.New("function_call has no name")
	}
	call := providers.ToolCall{Name: name.String()}
	callIDRaw := []byte(item.Get("call_id").Raw)
	if id := item.Get("call_id"); id.Type == gjson.String && id.String() != "" {
		call.ID = id.String()
	} else {
		call.ID = providers.GeneratedID([]byte(item.Raw), index)
		callIDRaw = providers.Quote(call.ID)
	}
	args := item.Get("arguments")
	argsRaw := []byte(args.Raw)
	switch {
	case args.Type == gjson.String && args.String() != "":
		call.Arguments = args.String()
	case args.IsObject():
		// Not what OpenAI sends, but some compatible servers might: the
		// object's text is the arguments, echoed as a string.
		call.Arguments = args.Raw
		argsRaw = providers.Quote(args.Raw)
	default:
		call.Arguments = "{}"
		argsRaw = []byte(`"{}"`)
	}
	echo := []byte(`{"type":"function_call"}`)
	var err error
	if echo, err = providers.SetRaw(echo, "call_id", callIDRaw); err != nil {
		return call, nil, err
	}
	if echo, err = providers.SetRaw(echo, "name", []byte(name.Raw)); err != nil {
		return call, nil, err
	}
	if echo, err = providers.SetRaw(echo, "arguments", argsRaw); err != nil {
		return call, nil, err
	}
	return call, echo, nil
}

// message reads an assistant message item into its text and the
// EasyInputMessage to echo. Refusal parts count as text: they are what the
// model answered.
func message(item gjson.Result) (string, json.RawMessage, error) {
	var parts []gjson.Result
	for _, p := range item.Get("content").Array() {
		switch p.Get("type").String() {
		case "output_text":
			parts = append(parts, p.Get("text"))
		case "refusal":
			parts = append(parts, p.Get("refusal"))
		}
	}
	var said string
	content := []byte(`""`)
	switch {
	case len(parts) == 1 && parts[0].Type == gjson.String:
		said = parts[0].String()
		content = []byte(parts[0].Raw) // the model's string, byte for byte
	case len(parts) > 1:
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.String())
		}
		said = b.String()
		content = providers.Quote(said)
	}
	echo := []byte(`{"type":"message","role":"assistant"}`)
	var err error
	if echo, err = providers.SetRaw(echo, "content", content); err != nil {
		return "", nil, err
	}
	if phase := item.Get("phase"); phase.Type == gjson.String {
		if echo, err = providers.SetRaw(echo, "phase", []byte(phase.Raw)); err != nil {
			return "", nil, err
		}
	}
	return said, echo, nil
}

// echoReasoning keeps the fields of a reasoning item that a stateless
// follow-up needs, as the exact JSON received: id, encrypted_content and
// summary. status and content are left out.
func echoReasoning(item gjson.Result) (json.RawMessage, error) {
	echo := []byte(`{"type":"reasoning"}`)
	var err error
	if id := item.Get("id"); id.Type == gjson.String {
		if echo, err = providers.SetRaw(echo, "id", []byte(id.Raw)); err != nil {
			return nil, err
		}
	}
	if echo, err = providers.SetRaw(echo, "encrypted_content", []byte(item.Get("encrypted_content").Raw)); err != nil {
		return nil, err
	}
	summary := []byte("[]")
	if s := item.Get("summary"); s.IsArray() {
		summary = []byte(s.Raw)
	}
	if echo, err = providers.SetRaw(echo, "summary", summary); err != nil {
		return nil, err
	}
	return echo, nil
}

// reasoningText is what a reasoning item lets the user read: its summary and,
// from servers that send it (DeepSeek, OpenRouter), its reasoning text.
func reasoningText(item gjson.Result) []string {
	var out []string
	for _, field := range []string{"summary", "content"} {
		for _, p := range item.Get(field).Array() {
			if s := p.Get("text").String(); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// usage reads a ResponseUsage object. input_tokens includes the cached
// ones; OpenRouter's Responses endpoint adds its cost.
func usage(u gjson.Result) providers.Usage {
	return providers.Usage{
		InputTokens:     int(u.Get("input_tokens").Int()),
		OutputTokens:    int(u.Get("output_tokens").Int()),
		CacheReadTokens: int(u.Get("input_tokens_details.cached_tokens").Int()),
		ReasoningTokens: int(u.Get("output_tokens_details.reasoning_tokens").Int()),
		TotalTokens:     int(u.Get("total_tokens").Int()),
		Cost:            providers.ReportedCost(u.Get("cost")),
	}
}

// stopReason is the response status, or why it is incomplete.
func stopReason(resp gjson.Result) string {
	status := resp.Get("status").String()
	if status == "incomplete" {
		if r := resp.Get("incomplete_details.reason").String(); r != "" {
			return r
		}
	}
	return status
}

// failure is the error of a response whose status is "failed". Its error
// object has code and message, like an in-stream error event.
func failure(resp gjson.Result) *providers.APIError {
	e := &providers.APIError{Message: "response failed"}
	if errv := resp.Get("error"); errv.IsObject() {
		if m := errv.Get("message").String(); m != "" {
			e.Message = m
		}
		e.Code = errv.Get("code").String()
		e.Type = errv.Get("type").String()
	}
	return e
}
