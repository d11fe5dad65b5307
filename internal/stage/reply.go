package stage

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/ask-cli/ask/internal/jsonpos"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/providers/command"
	"github.com/ask-cli/ask/internal/providers/textproto"
)

// ParsedReply is what `ask provider parse-tool-calls --text` prints. Under
// a text tool protocol it also holds the terminate flag and the fragments
// that looked like calls but could not be read.
type ParsedReply struct {
	Text      string               `json:"text"`
	ToolCalls []providers.ToolCall `json:"tool_calls"`
	Terminate bool                 `json:"terminate,omitempty"`
	Problems  []textproto.Problem  `json:"problems,omitempty"`
}

// Runnable are the calls a next stage can run, [] for none: unreadable
// ones are left out, since it could only run them (they are reported
// instead).
func Runnable(calls []providers.ToolCall) []providers.ToolCall {
	out := slices.DeleteFunc(slices.Clone(calls), func(c providers.ToolCall) bool { return c.Unreadable != "" })
	if out == nil {
		out = []providers.ToolCall{}
	}
	return out
}

// ReadText reads the calls in a reply's text as a run does; a fault in the
// text parser makes a malformed reply (exit 3), not a crash.
func ReadText(p *textproto.Protocol, turn *providers.Turn) (problems []textproto.Problem, err error) {
	defer providers.RecoverMalformed("the reply's text", &err)
	return p.Read(turn), nil
}

// ReadReply reads a stage's input as the provider's reply. A command
// model's reply is the text it printed, cleaned of terminal control as a
// run cleans it; any other is a JSON body or a recorded stream, checked
// first so that a fault is reported with its position.
func ReadReply(in Input, prov catalog.Provider, proto providers.Protocol) (*providers.Turn, error) {
	if prov.LocalProgram {
		text := command.Clean(in.Data)
		if strings.TrimSpace(text) == "" {
			return nil, fault.Usagef("%s is empty: expected the text the command model printed", in.Name)
		}
		return providers.ParseResponse(proto, []byte(text))
	}
	if err := sameProtocol(in, prov); err != nil {
		return nil, err
	}
	stream := providers.IsStreamBody(in.Data, proto.Framing())
	var err error
	if stream {
		err = in.CheckStream(proto.Framing())
	} else {
		err = in.CheckJSON()
	}
	if err != nil {
		return nil, err
	}
	turn, err := providers.ParseBody(proto, in.Data)
	var apiErr *providers.APIError
	if errors.As(err, &apiErr) && apiErr.Provider == "" {
		apiErr.Provider = prov.Name
	}
	switch {
	case err == nil:
		return turn, nil
	case apiErr != nil || stream:
		return nil, in.Fault(err)
	}
	// A JSON value that is not a response: where it starts, and what was
	// expected instead.
	return nil, jsonpos.At(in.Name, in.Data, len(in.Data)-len(bytes.TrimLeft(in.Data, " \t\r\n")),
		"%v: expected the response body or stream of %s, as `ask provider send -p %s` prints it", err, prov.Name, prov.Name)
}

// sameProtocol refuses a reply of another wire protocol than prov's, naming
// the -p that reads it: read as prov's, it would give no calls, or wrong ones.
func sameProtocol(in Input, prov catalog.Provider) error {
	is := providers.SniffReply(in.Data)
	if is == "" || is == prov.Protocol {
		return nil
	}
	var fits []string
	for _, p := range catalog.All() {
		if p.Protocol == is {
			fits = append(fits, p.Name)
		}
	}
	return fault.Usagef("%s is a reply in the %s protocol, not %s's (%s): give -p %s", in.Name, is, prov.Name, prov.Protocol, strings.Join(fits, " or -p "))
}
