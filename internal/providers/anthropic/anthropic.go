package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// APIVersion is the anthropic-version header every request carries.
const APIVersion = "2023-06-01"

// DefaultMaxTokens is sent when a Request leaves MaxTokens at 0, since the
// API requires a value.
const DefaultMaxTokens = 8192

// ThinkingBudgets are the budget_tokens of extended thinking for each
// Request.Reasoning: the API's minimum (1024) for low, and four and sixteen
// times that.
var ThinkingBudgets = map[string]int{"low": 1024, "medium": 4096, "high": 16384}

// Protocol is the Anthropic Messages protocol.
type Protocol struct{}

var _ providers.Protocol = (*Protocol)(nil)

// New returns the Anthropic Messages protocol.
func New() *Protocol { return &Protocol{} }

// Name is "anthropic".
func (*Protocol) Name() string { return "anthropic" }

// Framing is SSE with named events.
func (*Protocol) Framing() providers.Framing { return providers.SSE }

// HistoryField implements providers.Protocol.
func (*Protocol) HistoryField() string { return "messages" }

// Endpoint is base + "/messages"; the model travels in the body.
func (*Protocol) Endpoint(baseURL, _ string, _ bool) string {
	return strings.TrimRight(baseURL, "/") + "/messages"
}

// Authorize sets x-api-key when there is a key, and always the API version.
func (*Protocol) Authorize(h http.Header, key string) {
	if key != "" {
		h.Set("x-api-key", key)
	}
	h.Set("anthropic-version", APIVersion)
}

// FormatTools renders [{name, description, input_schema}]. An empty
// description is left out; a tool without parameters gets an empty object
// schema, which the API requires.
func (*Protocol) FormatTools(tools []providers.Tool) (json.RawMessage, error) {
	items, err := toolItems(tools)
	if err != nil || items == nil {
		return nil, err
	}
	return providers.JoinArray(items), nil
}

// toolItems renders each tool of FormatTools' array.
func toolItems(tools []providers.Tool) ([]json.RawMessage, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	items := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("anthropic: tool %d: name is missing", i)
		}
		params := t.ParamsOrEmpty()
		if !gjson.ValidBytes(params) {
			return nil, fmt.Errorf("anthropic: tool %q: input_schema is not valid JSON", t.Name)
		}
		items[i] = providers.Object(
			providers.Field{Key: "name", Value: providers.Quote(t.Name)},
			providers.Field{Key: "description", Value: providers.OptionalString(t.Description)},
			providers.Field{Key: "input_schema", Value: params})
	}
	return items, nil
}

// UserMessage is {"role":"user","content":TEXT}, or content blocks when
// files go with it (attach.go).
func (*Protocol) UserMessage(text string, attachments ...providers.Attachment) (json.RawMessage, error) {
	if len(attachments) > 0 {
		return withAttachments(text, attachments), nil
	}
	return providers.Object(
		providers.Field{Key: "role", Value: json.RawMessage(`"user"`)},
		providers.Field{Key: "content", Value: providers.Quote(text)}), nil
}

// FormatToolResults renders every result of one step as a tool_result block
// of ONE user message. is_error is sent only for failures; empty content is
// left out (the field is optional, and an empty string adds nothing).
func (*Protocol) FormatToolResults(results []providers.ToolResult) ([]json.RawMessage, error) {
	if len(results) == 0 {
		return nil, nil
	}
	blocks := make([]json.RawMessage, len(results))
	for i, r := range results {
		if r.ID == "" {
			return nil, fmt.Errorf("anthropic: tool result %d (%s): id is missing", i, r.Name)
		}
		var isError json.RawMessage
		if r.IsError {
			isError = providers.Bool(true)
		}
		blocks[i] = providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"tool_result"`)},
			providers.Field{Key: "tool_use_id", Value: providers.Quote(r.ID)},
			providers.Field{Key: "content", Value: providers.OptionalString(r.Content)},
			providers.Field{Key: "is_error", Value: isError})
	}
	return []json.RawMessage{providers.Object(
		providers.Field{Key: "role", Value: json.RawMessage(`"user"`)},
		providers.ArrayField("content", blocks))}, nil
}

// BuildRequest renders {model, max_tokens, system?, messages, tools?,
// output_config?, stream?}. The system prompt is a plain string, left out
// when empty, or one text block when it carries a cache mark
// (Request.Cache, cache.go). An answer schema becomes output_config.format where the model
// and schema allow it (schema.go), else an instruction in the system prompt.
//
// Reasoning turns on extended thinking with a budget (ThinkingBudgets).
// The budget counts within max_tokens and must stay below it, so it is
// added on top of the reply's cap: MaxTokens (or the default) still bounds
// the answer. With thinking on, the API takes no temperature but 1.
func (p *Protocol) BuildRequest(r providers.Request) ([]byte, error) {
	maxTokens := r.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	var thinking json.RawMessage
	if r.Reasoning != "" {
		budget, ok := ThinkingBudgets[r.Reasoning]
		if !ok {
			return nil, fmt.Errorf("anthropic: reasoning %q: %w", r.Reasoning, providers.ErrKnob)
		}
		if r.Temperature != nil && *r.Temperature != 1 {
			return nil, fmt.Errorf("anthropic: extended thinking (--reasoning) takes no temperature but 1, got %g: %w", *r.Temperature, providers.ErrKnob)
		}
		maxTokens += budget
		thinking = providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"enabled"`)},
			providers.Field{Key: "budget_tokens", Value: providers.Int(budget)})
	}
	system := r.System
	var format json.RawMessage // output_config.format, for native structured output
	if s := bytes.TrimSpace(r.Schema); len(s) > 0 {
		var compact bytes.Buffer
		if err := json.Compact(&compact, s); err != nil {
			return nil, fmt.Errorf("anthropic: schema is not valid JSON: %w", err)
		}
		if native, ok := nativeSchema(r.Model, compact.Bytes()); ok {
			format = append(append([]byte(`{"type":"json_schema","schema":`), native...), '}')
		} else {
			if system != "" {
				system += "\n\n"
			}
			system += providers.SchemaInstruction + compact.String()
		}
	}
	if i := r.BadMessage(gjson.ValidBytes); i >= 0 {
		return nil, fmt.Errorf("anthropic: message %d is not valid JSON", i)
	}
	tools, err := toolItems(r.Tools)
	if err != nil {
		return nil, err
	}
	systemValue := providers.OptionalString(system)
	msgs := r.Messages
	if r.Cache.Mark {
		msgs, systemValue, tools = markCache(msgs, systemValue, tools)
	}
	var toolsValue json.RawMessage
	if tools != nil {
		toolsValue = providers.JoinArray(tools)
	}

	// The body is written once, in order, so that the conversation (each
	// message validated above) is copied a single time however long it
	// grows.
	fields := []providers.Field{
		{Key: "model", Value: providers.Quote(r.Model)},
		{Key: "max_tokens", Value: providers.Int(maxTokens)},
	}
	fields = append(fields,
		providers.Field{Key: "system", Value: systemValue},
		providers.ArrayField("messages", msgs),
		providers.Field{Key: "tools", Value: toolsValue})
	if toolsValue != nil && r.NoToolCalls {
		// The history's tool_use blocks need the tools declared; none
		// forbids calling them.
		fields = append(fields, providers.Field{Key: "tool_choice", Value: json.RawMessage(`{"type":"none"}`)})
	}
	if format != nil {
		fields = append(fields, providers.Field{Key: "output_config", Value: providers.Object(providers.Field{Key: "format", Value: format})})
	}
	if thinking != nil {
		fields = append(fields, providers.Field{Key: "thinking", Value: thinking})
	}
	fields = append(fields, providers.Field{Key: "temperature", Value: providers.OptionalNumber(r.Temperature)})
	if r.Stream {
		fields = append(fields, providers.Field{Key: "stream", Value: providers.Bool(true)})
	}
	return providers.Object(fields...), nil
}

// ParseToolCalls reads the calls of a response body or a whole recorded
// stream.
func (p *Protocol) ParseToolCalls(body []byte) ([]providers.ToolCall, error) {
	turn, err := providers.ParseBody(p, body)
	if err != nil {
		return nil, err
	}
	return turn.Calls, nil
}

// NewStream returns an accumulator for one streamed response.
func (*Protocol) NewStream() providers.Stream { return newStream() }
