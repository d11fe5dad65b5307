package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// Protocol is the Chat Completions wire protocol. It holds no state but
// how its dialect spells a setting.
type Protocol struct {
	providers.OpenAIModels // GET /models

	// ReasoningObject sends Request.Reasoning as OpenRouter takes it,
	// "reasoning":{"effort":…}, instead of Chat Completions'
	// "reasoning_effort".
	ReasoningObject bool
	// NoResponseFormat leaves Request.Schema out of the body, for a
	// server that refuses a response_format of type json_schema
	// (DeepSeek answers it with HTTP 400); the run gives such a model the
	// schema in its system prompt instead.
	NoResponseFormat bool
}

var (
	_ providers.Protocol    = (*Protocol)(nil)
	_ providers.ModelLister = (*Protocol)(nil)
)

// New returns the Chat Completions protocol.
func New() *Protocol { return &Protocol{} }

// Name implements providers.Protocol.
func (*Protocol) Name() string { return "openai" }

// Framing implements providers.Protocol: streams are SSE ending in [DONE].
func (*Protocol) Framing() providers.Framing { return providers.SSE }

// HistoryField implements providers.Protocol.
func (*Protocol) HistoryField() string { return "messages" }

// Endpoint implements providers.Protocol. The model travels in the body.
func (*Protocol) Endpoint(baseURL, _ string, _ bool) string {
	return strings.TrimRight(baseURL, "/") + "/chat/completions"
}

// Authorize implements providers.Protocol. Local servers (LM Studio,
// llama.cpp) need no key, so none is sent when key is empty.
func (*Protocol) Authorize(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

// FormatTools implements providers.Protocol:
// [{"type":"function","function":{"name","description","parameters"}}].
func (*Protocol) FormatTools(tools []providers.Tool) (json.RawMessage, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	items := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("openai: tool %d has no name", i)
		}
		params := t.ParamsOrEmpty()
		if !gjson.ValidBytes(params) {
			return nil, fmt.Errorf("openai: tool %s: parameters are not valid JSON", t.Name)
		}
		items[i] = providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"function"`)},
			providers.Field{Key: "function", Value: providers.Object(
				providers.Field{Key: "name", Value: providers.Quote(t.Name)},
				providers.Field{Key: "description", Value: providers.OptionalString(t.Description)},
				providers.Field{Key: "parameters", Value: params})})
	}
	return providers.JoinArray(items), nil
}

// UserMessage implements providers.Protocol: {"role":"user","content":TEXT},
// or content parts when files go with it (attach.go).
func (*Protocol) UserMessage(text string, attachments ...providers.Attachment) (json.RawMessage, error) {
	if len(attachments) > 0 {
		return withAttachments(text, attachments), nil
	}
	return message("user", text), nil
}

// message renders {"role":role,"content":text}.
func message(role, text string) json.RawMessage {
	return providers.Object(
		providers.Field{Key: "role", Value: providers.Quote(role)},
		providers.Field{Key: "content", Value: providers.Quote(text)})
}

// FormatToolResults implements providers.Protocol: one role "tool" message
// per result, in order. Chat Completions has no is_error field, so an error
// result says so in its text.
func (*Protocol) FormatToolResults(results []providers.ToolResult) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(results))
	for i, r := range results {
		if r.ID == "" {
			return nil, fmt.Errorf("openai: tool result %d (%s) has no call id", i, r.Name)
		}
		content := r.Content
		if r.IsError && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(content)), "error") {
			content = "Error: " + content
		}
		out[i] = providers.Object(
			providers.Field{Key: "role", Value: json.RawMessage(`"tool"`)},
			providers.Field{Key: "tool_call_id", Value: providers.Quote(r.ID)},
			providers.Field{Key: "content", Value: providers.Quote(content)})
	}
	return out, nil
}

// BuildRequest implements providers.Protocol. The body is written once, in
// order (providers.Object), so its cost is linear in the size of the
// history. Request.Cache marks content parts for the OpenRouter models that
// cache only what is marked (cache.go) and names the conversation in
// prompt_cache_key.
func (p *Protocol) BuildRequest(r providers.Request) ([]byte, error) {
	if r.Model == "" {
		return nil, fmt.Errorf("openai: build request: no model")
	}
	if i := r.BadMessage(gjson.ValidBytes); i >= 0 {
		return nil, fmt.Errorf("openai: build request: message %d is not valid JSON", i)
	}
	msgs := make([]json.RawMessage, 0, len(r.Messages)+1)
	if r.System != "" {
		msgs = append(msgs, message("system", r.System))
	}
	msgs = append(msgs, r.Messages...)
	if r.Cache.Mark {
		markCache(msgs, r.System != "")
	}
	tools, err := p.FormatTools(r.Tools)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if p.NoResponseFormat {
		r.Schema = nil
	}
	if len(r.Schema) > 0 && !gjson.ValidBytes(r.Schema) {
		return nil, fmt.Errorf("openai: build request: schema is not valid JSON")
	}
	reasoning, err := p.reasoning(r.Reasoning)
	if err != nil {
		return nil, err
	}

	fields := []providers.Field{
		{Key: "model", Value: providers.Quote(r.Model)},
		providers.ArrayField("messages", msgs),
		{Key: "tools", Value: tools},
	}
	if len(tools) > 0 && r.NoToolCalls {
		fields = append(fields, providers.Field{Key: "tool_choice", Value: json.RawMessage(`"none"`)})
	}
	if r.Cache.Key != "" {
		fields = append(fields, providers.Field{Key: "prompt_cache_key", Value: providers.Quote(r.Cache.Key)})
	}
	if r.Stream {
		fields = append(fields,
			providers.Field{Key: "stream", Value: providers.Bool(true)},
			providers.Field{Key: "stream_options", Value: json.RawMessage(`{"include_usage":true}`)})
	}
	if r.MaxTokens > 0 {
		fields = append(fields, providers.Field{Key: maxTokensField(r.Model), Value: providers.Int(r.MaxTokens)})
	}
	fields = append(fields, providers.Field{Key: "temperature", Value: providers.OptionalNumber(r.Temperature)}, reasoning)
	switch r.Tier {
	case "":
	case providers.TierFlex:
		fields = append(fields, providers.Field{Key: "service_tier", Value: providers.Quote(r.Tier)})
	default:
		// Background mode is the Responses API's; Chat Completions has none.
		return nil, fmt.Errorf("openai: tier %q: Chat Completions has flex only (background needs the Responses API): %w", r.Tier, providers.ErrKnob)
	}
	if len(r.Schema) > 0 {
		fields = append(fields, providers.Field{Key: "response_format", Value: providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"json_schema"`)},
			providers.Field{Key: "json_schema", Value: providers.Object(
				providers.Field{Key: "name", Value: json.RawMessage(`"answer"`)},
				providers.Field{Key: "schema", Value: r.Schema},
				providers.Field{Key: "strict", Value: providers.Bool(false)},
			)},
		)})
	}
	return providers.Object(fields...), nil
}

// reasoning is the field --reasoning becomes in the dialect: Chat
// Completions' "reasoning_effort", or OpenRouter's "reasoning":{"effort"};
// a field without a value (left out) for "".
func (p *Protocol) reasoning(level string) (providers.Field, error) {
	switch {
	case level == "":
		return providers.Field{}, nil
	case !slices.Contains(providers.ReasoningLevels, level):
		return providers.Field{}, fmt.Errorf("openai: reasoning %q: %w", level, providers.ErrKnob)
	case p.ReasoningObject:
		return providers.Field{Key: "reasoning", Value: providers.Object(providers.Field{Key: "effort", Value: providers.Quote(level)})}, nil
	}
	return providers.Field{Key: "reasoning_effort", Value: providers.Quote(level)}, nil
}

// ParseToolCalls implements providers.Protocol for a response body or a
// whole recorded stream.
func (p *Protocol) ParseToolCalls(body []byte) ([]providers.ToolCall, error) {
	t, err := providers.ParseBody(p, body)
	if err != nil {
		return nil, err
	}
	return t.Calls, nil
}

// NewStream implements providers.Protocol.
func (*Protocol) NewStream() providers.Stream { return newStream() }
