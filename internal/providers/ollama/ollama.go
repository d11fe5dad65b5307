// Package ollama speaks Ollama's native chat protocol, POST /api/chat, to a
// local server (no credential) or to ollama.com (a Bearer key).
//
// The traps it handles (WIRE-FORMATS.md §6):
//   - the server streams unless told otherwise, so every request says
//     "stream" explicitly;
//   - tool-call arguments are JSON objects, in replies and in the history
//     sent back; a JSON-string "arguments" would not decode on the server;
//   - done_reason is "stop" even when the model called tools, so calls are
//     detected by their presence only;
//   - a stream carries each tool call whole in one line, and reports errors
//     as an {"error":"..."} line under a 200 status;
//   - there is no tool_choice; the reply cap is options.num_predict and
//     structured output is "format" holding a JSON Schema.
package ollama

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/tidwall/gjson"
)

// Protocol is the /api/chat wire protocol. It holds no state.
type Protocol struct{}

// New returns the Ollama protocol.
func New() *Protocol { return &Protocol{} }

var _ providers.Protocol = (*Protocol)(nil)

// Name implements providers.Protocol.
func (*Protocol) Name() string { return "ollama" }

// Framing implements providers.Protocol: one JSON object a line. ollama.com
// labels the stream application/json, so the caller must go by the
// request's stream flag rather than by Content-Type.
func (*Protocol) Framing() providers.Framing { return providers.NDJSON }

// HistoryField implements providers.Protocol.
func (*Protocol) HistoryField() string { return "messages" }

// Endpoint implements providers.Protocol. The base is the server root
// (http://localhost:11434, OLLAMA_HOST); a trailing slash and a base that
// already names the API root (https://ollama.com/api) are accepted too.
func (*Protocol) Endpoint(baseURL, _ string, _ bool) string {
	base := strings.TrimRight(baseURL, "/")
	if strings.HasSuffix(base, "/api") {
		return base + "/chat"
	}
	return base + "/api/chat"
}

// Authorize implements providers.Protocol. A local server needs no
// credential; ollama.com takes a Bearer key.
func (*Protocol) Authorize(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

// FormatTools implements providers.Protocol. Ollama declares tools exactly
// as the standardized format does.
func (*Protocol) FormatTools(tools []providers.Tool) (json.RawMessage, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("ollama: tool %d: name is missing", i)
		}
	}
	b, err := providers.MarshalTools(tools)
	if err != nil {
		return nil, fmt.Errorf("ollama: format tools: %w", err)
	}
	return b, nil
}

// ParseToolCalls implements providers.Protocol for a response body or a
// whole recorded stream. A reply without calls gives an empty, non-nil list.
func (p *Protocol) ParseToolCalls(body []byte) ([]providers.ToolCall, error) {
	turn, err := p.parseBody(body)
	if err != nil {
		return nil, err
	}
	if turn.Calls == nil {
		return []providers.ToolCall{}, nil
	}
	return turn.Calls, nil
}

// parseBody reads a single response object or a whole NDJSON stream. It does
// not use providers.ParseBody, whose IsStreamBody takes any multi-line body
// that starts with "{" for NDJSON, pretty-printed JSON included: here a body
// that is one JSON document is a response, and anything else a stream (a
// stream of two or more objects is never one valid document).
func (p *Protocol) parseBody(body []byte) (*providers.Turn, error) {
	if gjson.ValidBytes(body) {
		return providers.ParseResponse(p, body)
	}
	return providers.ReadStream(bytes.NewReader(body), providers.NDJSON, p.NewStream(), nil)
}

// FormatToolResults implements providers.Protocol: one role "tool" message
// per result, in order, each right after the assistant message.
//
// tool_name is what Ollama's chat templates use to pair a result with its
// call. tool_call_id is declared by the server's api.Message and permitted by
// docs/openapi.yaml, whose ChatMessage schema is open (it lists neither field
// but does not forbid extra ones); it is sent whenever the result has an id
// so that templates keyed by id work as well. A failed call's content gets an
// "Error: " prefix (unless it already starts with "error:" in any case)
// because the message has no error flag of its own.
func (*Protocol) FormatToolResults(results []providers.ToolResult) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(results))
	for i, r := range results {
		msg, err := toolMessage(r)
		if err != nil {
			return nil, fmt.Errorf("ollama: tool result %d: %w", i, err)
		}
		out = append(out, msg)
	}
	return out, nil
}

func toolMessage(r providers.ToolResult) (json.RawMessage, error) {
	content := r.Content
	if r.IsError && !strings.HasPrefix(strings.ToLower(content), "error:") {
		content = "Error: " + content
	}
	return providers.Object(
		providers.Field{Key: "role", Value: json.RawMessage(`"tool"`)},
		providers.Field{Key: "tool_name", Value: providers.OptionalString(r.Name)},
		providers.Field{Key: "tool_call_id", Value: providers.OptionalString(r.ID)},
		providers.Field{Key: "content", Value: providers.Quote(content)}), nil
}

// UserMessage implements providers.Protocol: images go base64 in
// "images" (attach.go).
func (*Protocol) UserMessage(text string, attachments ...providers.Attachment) (json.RawMessage, error) {
	if len(attachments) > 0 {
		return withAttachments(text, attachments)
	}
	return textMessage("user", text), nil
}

// textMessage is {"role":role,"content":text}.
func textMessage(role, text string) json.RawMessage {
	return providers.Object(
		providers.Field{Key: "role", Value: providers.Quote(role)},
		providers.Field{Key: "content", Value: providers.Quote(text)})
}

// BuildRequest implements providers.Protocol. The history is copied byte for
// byte after the system message. "stream" is always written because the
// server's default is true; MaxTokens becomes options.num_predict and Schema
// becomes "format". There is no tool_choice in this protocol.
func (p *Protocol) BuildRequest(r providers.Request) ([]byte, error) {
	body, err := p.buildRequest(r)
	if err != nil {
		return nil, fmt.Errorf("ollama: build request: %w", err)
	}
	return body, nil
}

func (p *Protocol) buildRequest(r providers.Request) ([]byte, error) {
	if r.Model == "" {
		return nil, errors.New("model is missing")
	}
	msgs := make([]json.RawMessage, 0, len(r.Messages)+1)
	if r.System != "" {
		msgs = append(msgs, textMessage("system", r.System))
	}
	if i := r.BadMessage(isObject); i >= 0 {
		return nil, fmt.Errorf("message %d is not a JSON object", i)
	}
	msgs = append(msgs, r.Messages...)
	tools, err := p.FormatTools(r.Tools)
	if err != nil {
		return nil, err
	}
	// Ollama has no tool_choice: a request that must not call tools
	// declares none (its templates render the history's calls anyway).
	if r.NoToolCalls {
		tools = nil
	}
	// think takes a level as well as true or false (docs/openapi.yaml).
	if r.Reasoning != "" && !slices.Contains(providers.ReasoningLevels, r.Reasoning) {
		return nil, fmt.Errorf("reasoning %q: %w", r.Reasoning, providers.ErrKnob)
	}
	var format json.RawMessage
	if len(bytes.TrimSpace(r.Schema)) > 0 {
		if !isObject(r.Schema) {
			return nil, errors.New("schema is not a JSON object")
		}
		format = r.Schema
	}
	var numPredict json.RawMessage
	if r.MaxTokens > 0 {
		numPredict = providers.Int(r.MaxTokens)
	}
	// Ollama cuts a prompt over num_ctx without a word: when the run
	// knows the window, the request says it, so that the server holds it
	// and the run compacts below it.
	var numCtx json.RawMessage
	if r.ContextWindow > 0 {
		numCtx = providers.Int(r.ContextWindow)
	}
	return providers.Object(
		providers.Field{Key: "model", Value: providers.Quote(r.Model)},
		providers.ArrayField("messages", msgs),
		providers.Field{Key: "tools", Value: tools},
		providers.Field{Key: "stream", Value: providers.Bool(r.Stream)},
		providers.Field{Key: "options", Value: providers.OptionalObject(
			providers.Field{Key: "num_ctx", Value: numCtx},
			providers.Field{Key: "num_predict", Value: numPredict},
			providers.Field{Key: "temperature", Value: providers.OptionalNumber(r.Temperature)},
		)},
		providers.Field{Key: "think", Value: providers.OptionalString(r.Reasoning)},
		providers.Field{Key: "format", Value: format},
	), nil
}

// isObject reports whether b is one valid JSON object, without copying it.
func isObject(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && gjson.ValidBytes(b)
}

// ParseResponse implements providers.Protocol for a non-streamed reply: one
// JSON object with the whole message and the metrics.
func (*Protocol) ParseResponse(body []byte) (*providers.Turn, error) {
	if !gjson.ValidBytes(body) {
		return nil, fmt.Errorf("ollama: %w", providers.Malformed("response body is not JSON"))
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, fmt.Errorf("ollama: %w", providers.Malformed("response body is not a JSON object"))
	}
	if e := providers.StreamError(body); e != nil {
		e.StatusCode = http.StatusOK // an error object under a success status
		return nil, e
	}
	if done := root.Get("done"); done.Exists() && !done.Bool() {
		// One line of a stream that stopped there, not a whole reply.
		return nil, fmt.Errorf("ollama: %w: the body is a done:false stream line", providers.ErrStreamCut)
	}
	msg := root.Get("message")
	if !msg.IsObject() {
		return nil, fmt.Errorf("ollama: %w", providers.Malformed("response has no message object"))
	}
	var r reply
	if err := r.add(msg, body); err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	r.finish(root)
	return r.turn()
}

// NewStream implements providers.Protocol.
func (*Protocol) NewStream() providers.Stream { return &stream{} }
