package main

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/jsonpos"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/providers/command"
	"github.com/ask-cli/ask/internal/providers/textproto"
)

// parsedReply is what `ask provider parse-tool-calls --text` prints. Under
// a text tool protocol it also holds the terminate flag and the fragments
// that looked like calls but could not be read.
type parsedReply struct {
	Text      string               `json:"text"`
	ToolCalls []providers.ToolCall `json:"tool_calls"`
	Terminate bool                 `json:"terminate,omitempty"`
	Problems  []textproto.Problem  `json:"problems,omitempty"`
}

// providerParseToolCalls reads a response the way the loop does: one JSON
// body, or a whole recorded stream in the protocol's framing (SSE or
// NDJSON), told apart by its first bytes; for the command provider, the
// text the program printed. Under a text tool protocol the calls are read
// from the reply's text, for the tools a run would declare.
func providerParseToolCalls(c *cli.Context, stdio *IO) error {
	if err := flagAfterArgs(c); err != nil {
		return err
	}
	in, err := readStageInput(c, stdio)
	if err != nil {
		return err
	}
	prov, proto, form, err := stageProtocolForm(c, stdio)
	if err != nil {
		return err
	}
	turn, err := readReply(in, prov, proto)
	if err != nil {
		return err
	}
	var problems []textproto.Problem
	if form != "" {
		declared, err := stageTools(c, stdio)
		if err != nil {
			return err
		}
		if problems, err = readText(textproto.Wrap(proto, form, declared), turn); err != nil {
			return err
		}
		if !c.Bool("quiet") {
			for _, p := range problems {
				fmt.Fprintf(stdio.Err, "ask: %s: call %d of the reply could not be read and is left out: %s\n", in.name, p.Call, strings.Join(strings.Fields(p.Message), " "))
			}
		}
	}
	// Unreadable calls are reported above, not passed on: the next stage
	// could only run them.
	calls := slices.DeleteFunc(slices.Clone(turn.Calls), func(c providers.ToolCall) bool { return c.Unreadable != "" })
	if calls == nil {
		calls = []providers.ToolCall{}
	}
	if c.Bool("text") {
		return writeStageValue(stdio, parsedReply{Text: turn.Text, ToolCalls: calls, Terminate: turn.Terminate, Problems: problems})
	}
	return writeStageValue(stdio, calls)
}

// readText reads the calls in a reply's text as a run does; a fault in the
// text parser makes a malformed reply (exit 3), not a crash.
func readText(p *textproto.Protocol, turn *providers.Turn) (problems []textproto.Problem, err error) {
	defer providers.RecoverMalformed("the reply's text", &err)
	return p.Read(turn), nil
}

// readReply reads a stage's input as the provider's reply. A command
// model's reply is the text it printed, cleaned of terminal control as a
// run cleans it; any other is a JSON body or a recorded stream, checked
// first so that a fault is reported with its position.
func readReply(in stageInput, prov catalog.Provider, proto providers.Protocol) (*providers.Turn, error) {
	if prov.LocalProgram {
		text := command.Clean(in.data)
		if strings.TrimSpace(text) == "" {
			return nil, usageErr("%s is empty: expected the text the command model printed", in.name)
		}
		return providers.ParseResponse(proto, []byte(text))
	}
	stream := providers.IsStreamBody(in.data, proto.Framing())
	var err error
	if stream {
		err = in.checkStream(proto.Framing())
	} else {
		err = in.checkJSON()
	}
	if err != nil {
		return nil, err
	}
	turn, err := providers.ParseBody(proto, in.data)
	var apiErr *providers.APIError
	if errors.As(err, &apiErr) && apiErr.Provider == "" {
		apiErr.Provider = prov.Name
	}
	switch {
	case err == nil:
		return turn, nil
	case apiErr != nil || stream:
		return nil, inputErr(in, err)
	}
	// A JSON value that is not a response: where it starts, and what was
	// expected instead.
	return nil, jsonpos.At(in.name, in.data, len(in.data)-len(bytes.TrimLeft(in.data, " \t\r\n")),
		"%v: expected the response body or stream of %s, as `ask provider send -p %s` prints it", err, prov.Name, prov.Name)
}

// stageTools are the tools a run with the same flags would declare: the
// ones a text tool protocol reads calls of.
func stageTools(c *cli.Context, stdio *IO) ([]providers.Tool, error) {
	r, err := offlineRun(c, stdio)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Declared, nil
}
