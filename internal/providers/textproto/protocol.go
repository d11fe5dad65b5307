package textproto

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ask-cli/ask/internal/providers"
)

// Protocol runs the text tool protocol over another wire protocol: it
// declares no native tools, teaches the form in the system prompt, reads
// calls out of the reply's text, and sends results back as one user
// message. History holds only the inner protocol's plain text messages.
//
// A reply with runnable calls and broken ones runs the runnable ones; each
// broken one stays among them as an unreadable call (ToolCall.Unreadable),
// which the loop answers with its error in its place, so every call is
// answered.
type Protocol struct {
	inner providers.Protocol
	form  Form
	tools []providers.Tool
}

var _ providers.Protocol = (*Protocol)(nil)

// Wrap returns the text tool protocol over inner, reading replies for
// calls of tools (the same tools the loop declares in each request).
func Wrap(inner providers.Protocol, form Form, tools []providers.Tool) *Protocol {
	return &Protocol{inner: inner, form: form, tools: tools}
}

// Inner is the wire protocol underneath.
func (p *Protocol) Inner() providers.Protocol { return p.inner }

// Form is the form the system prompt teaches.
func (p *Protocol) Form() Form { return p.form }

// Name implements providers.Protocol: the wire protocol is the inner one.
func (p *Protocol) Name() string { return p.inner.Name() }

// FormatTools implements providers.Protocol: no native tools are declared.
func (p *Protocol) FormatTools([]providers.Tool) (json.RawMessage, error) { return nil, nil }

// UserMessage implements providers.Protocol: the text and any files go as
// the wire protocol sends them.
func (p *Protocol) UserMessage(text string, attachments ...providers.Attachment) (json.RawMessage, error) {
	return p.inner.UserMessage(text, attachments...)
}

// FormatToolResults implements providers.Protocol: every result of a step
// goes back in one user message, in the format of FormatResults.
func (p *Protocol) FormatToolResults(results []providers.ToolResult) ([]json.RawMessage, error) {
	if len(results) == 0 {
		return nil, nil
	}
	msg, err := p.inner.UserMessage(FormatResults(results))
	if err != nil {
		return nil, fmt.Errorf("tool results: %w", err)
	}
	return []json.RawMessage{msg}, nil
}

// BuildRequest implements providers.Protocol: the request goes without
// tools, and the system prompt ends with the instructions for them.
func (p *Protocol) BuildRequest(r providers.Request) ([]byte, error) {
	if teach := Instructions(r.Tools, p.form); teach != "" {
		r.System = strings.TrimSpace(r.System + "\n\n" + teach)
	}
	r.Tools = nil
	return p.inner.BuildRequest(r)
}

// ParseResponse implements providers.Protocol.
func (p *Protocol) ParseResponse(body []byte) (*providers.Turn, error) {
	t, err := p.inner.ParseResponse(body)
	if err != nil {
		return nil, err
	}
	p.Read(t)
	return t, nil
}

// ParseToolCalls implements providers.Protocol for a body or a whole
// recorded stream.
func (p *Protocol) ParseToolCalls(body []byte) ([]providers.ToolCall, error) {
	t, err := providers.ParseBody(p, body)
	if err != nil {
		return nil, err
	}
	return t.Calls, nil
}

// NewStream implements providers.Protocol. Text is not shown as it
// arrives: a call may start anywhere in it, and the answer is only known
// once the reply is complete.
func (p *Protocol) NewStream() providers.Stream { return &stream{inner: p.inner.NewStream(), p: p} }

// Framing implements providers.Protocol.
func (p *Protocol) Framing() providers.Framing { return p.inner.Framing() }

// HistoryField implements providers.Protocol.
func (p *Protocol) HistoryField() string { return p.inner.HistoryField() }

// Endpoint implements providers.Protocol.
func (p *Protocol) Endpoint(baseURL, model string, stream bool) string {
	return p.inner.Endpoint(baseURL, model, stream)
}

// Authorize implements providers.Protocol.
func (p *Protocol) Authorize(h http.Header, key string) { p.inner.Authorize(h, key) }

// Read reads a turn of the inner protocol as the loop does: it replaces
// the turn's text by the text outside its calls and sets the calls, the
// terminate flag and, for a reply whose calls could not be read, the
// correction the loop sends back; it returns the problems, each with its
// place among the reply's calls. The inner protocol's messages stay as
// they are: the model sees its own reply verbatim. A turn that already
// has (native) calls is left as it is.
//
// A reply with runnable calls is not a parse failure, whatever else it
// holds, since something runs: its broken calls stay among the calls as
// unreadable ones, which the loop answers with their errors.
func (p *Protocol) Read(t *providers.Turn) []Problem {
	if len(t.Calls) > 0 {
		return nil // native calls despite none declared: leave them to the loop
	}
	reply := t.Text
	res := Parse(reply, p.tools)
	t.Text, t.Calls, t.Terminate = res.Text, res.Calls, res.Terminate
	switch {
	case len(res.Problems) == 0:
	case len(res.Calls) == 0:
		t.Invalid = Correction(res.Problems, p.tools, p.form)
	default:
		t.Calls = withUnreadable(reply, res.Calls, res.Problems, newParser(p.tools), p.form)
	}
	return res.Problems
}

type stream struct {
	inner providers.Stream
	p     *Protocol
}

func (s *stream) Add(ev providers.Event) (string, error) {
	_, err := s.inner.Add(ev)
	return "", err
}

func (s *stream) Done() bool { return s.inner.Done() }

func (s *stream) Turn() (*providers.Turn, error) {
	t, err := s.inner.Turn()
	if err != nil {
		return nil, err
	}
	s.p.Read(t)
	return t, nil
}
