package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/textproto"
)

// Plain is the protocol of a model that only reads and writes text: its
// messages are {"role", "content"} objects, its request is the system
// prompt and those messages, and its response is the text itself. It has
// no native tools; textproto.Wrap gives it tools.
type Plain struct{}

var _ providers.Protocol = Plain{}

// NewPlain returns the plain text protocol.
func NewPlain() Plain { return Plain{} }

// Name implements providers.Protocol.
func (Plain) Name() string { return "command" }

// FormatTools implements providers.Protocol: there are no native tools.
func (Plain) FormatTools(tools []providers.Tool) (json.RawMessage, error) {
	if len(tools) > 0 {
		return nil, errors.New("command: a command model has no native tools; use the text tool protocol")
	}
	return nil, nil
}

// UserMessage implements providers.Protocol. A program reads text only:
// no catalog row lets files reach it, and any that did are refused.
func (Plain) UserMessage(text string, attachments ...providers.Attachment) (json.RawMessage, error) {
	if len(attachments) > 0 {
		return nil, errors.New("command: a command model takes no attachments")
	}
	return message("user", text), nil
}

// FormatToolResults implements providers.Protocol: the results as one user
// message, as the text tool protocol sends them.
func (Plain) FormatToolResults(results []providers.ToolResult) ([]json.RawMessage, error) {
	if len(results) == 0 {
		return nil, nil
	}
	return []json.RawMessage{message("user", textproto.FormatResults(results))}, nil
}

// BuildRequest implements providers.Protocol:
// {"model": ..., "system": ..., "messages": [...]}.
func (p Plain) BuildRequest(r providers.Request) ([]byte, error) {
	if _, err := p.FormatTools(r.Tools); err != nil {
		return nil, err
	}
	hasRole := func(m []byte) bool { return gjson.ValidBytes(m) && gjson.GetBytes(m, "role").Exists() }
	if i := r.BadMessage(hasRole); i >= 0 {
		return nil, fmt.Errorf("command: build request: message %d is not a {\"role\", \"content\"} object", i)
	}
	return providers.Object(
		providers.Field{Key: "model", Value: providers.Quote(r.Model)},
		providers.Field{Key: "system", Value: providers.Quote(r.System)},
		providers.ArrayField("messages", r.Messages),
	), nil
}

// ParseResponse implements providers.Protocol: the body is the reply.
func (Plain) ParseResponse(body []byte) (*providers.Turn, error) {
	text := string(body)
	return &providers.Turn{Text: text, Messages: []json.RawMessage{message("assistant", text)}, StopReason: "stop"}, nil
}

// ParseToolCalls implements providers.Protocol: plain text has no native
// calls.
func (Plain) ParseToolCalls([]byte) ([]providers.ToolCall, error) { return nil, nil }

// NewStream implements providers.Protocol: each line of output is text.
func (Plain) NewStream() providers.Stream { return &lines{} }

// Framing implements providers.Protocol.
func (Plain) Framing() providers.Framing { return providers.NDJSON }

// HistoryField implements providers.Protocol.
func (Plain) HistoryField() string { return "messages" }

// Endpoint implements providers.Protocol: there is no URL.
func (Plain) Endpoint(string, string, bool) string { return "" }

// Authorize implements providers.Protocol: there is no credential.
func (Plain) Authorize(http.Header, string) {}

func message(role, text string) json.RawMessage {
	return json.RawMessage(`{"role":"` + role + `","content":` + string(providers.Quote(text)) + `}`)
}

// lines reads output line by line; it ends where the output ends.
type lines struct{ text strings.Builder }

func (l *lines) Add(ev providers.Event) (string, error) {
	l.text.Write(ev.Data)
	l.text.WriteByte('\n')
	return string(ev.Data) + "\n", nil
}

func (l *lines) Done() bool { return false }

func (l *lines) Turn() (*providers.Turn, error) {
	return Plain{}.ParseResponse([]byte(l.text.String()))
}
