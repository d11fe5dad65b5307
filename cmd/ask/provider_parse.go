package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
)

// parsedReply is what `ask provider parse-tool-calls --text` prints.
type parsedReply struct {
	Text      string               `json:"text"`
	ToolCalls []providers.ToolCall `json:"tool_calls"`
}

// providerParseToolCalls reads a response the way the loop does: one JSON
// body, or a whole recorded stream in the protocol's framing (SSE or
// NDJSON), told apart by its first bytes.
func providerParseToolCalls(c *cli.Context, stdio *IO) error {
	if err := flagAfterArgs(c); err != nil {
		return err
	}
	in, err := readStageInput(c, stdio)
	if err != nil {
		return err
	}
	prov, proto, _, err := stageProtocol(c, stdio)
	if err != nil {
		return err
	}
	if providers.IsStreamBody(in.data, proto.Framing()) {
		err = in.checkStream(proto.Framing())
	} else {
		err = in.checkJSON()
	}
	if err != nil {
		return err
	}
	turn, err := providers.ParseBody(proto, in.data)
	var apiErr *providers.APIError
	if errors.As(err, &apiErr) && apiErr.Provider == "" {
		apiErr.Provider = prov.Name
	}
	if err != nil {
		return inputErr(in, err)
	}
	calls := turn.Calls
	if calls == nil {
		calls = []providers.ToolCall{}
	}
	if c.Bool("text") {
		return writeStageValue(stdio, parsedReply{Text: turn.Text, ToolCalls: calls})
	}
	return writeStageValue(stdio, calls)
}

// checkStream checks that every event of a recorded stream holds one JSON
// value (OpenAI's closing "[DONE]" excepted), naming the line and column
// of the first fault.
func (in stageInput) checkStream(f providers.Framing) error {
	lines := bytes.Split(in.data, []byte("\n"))
	if f == providers.NDJSON {
		for i, line := range lines {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if err := jsonFault(line); err != nil {
				_, col := syntaxPosition(line, err)
				return in.streamFault(i+1, col, err)
			}
		}
		return nil
	}
	// SSE: an event's data lines join into one value, which ends at a blank
	// line (or the end of the input).
	var data []byte
	var starts []int // for each data line: its line number
	var cols []int   // for each data line: the column where its value begins
	flush := func() error {
		defer func() { data, starts, cols = nil, nil, nil }()
		if len(starts) == 0 || string(bytes.TrimSpace(data)) == "[DONE]" {
			return nil
		}
		err := jsonFault(data)
		if err == nil {
			return nil
		}
		// The fault's line within the event's data is the data line it is on.
		line, col := syntaxPosition(data, err)
		k := min(line-1, len(starts)-1)
		return in.streamFault(starts[k], cols[k]+col-1, err)
	}
	for i, raw := range lines {
		line := bytes.TrimSuffix(raw, []byte("\r"))
		if len(line) == 0 {
			if err := flush(); err != nil {
				return err
			}
			continue
		}
		if value, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			col := len("data:") + 1
			if trimmed, spaced := bytes.CutPrefix(value, []byte(" ")); spaced {
				value, col = trimmed, col+1
			}
			if len(starts) > 0 {
				data = append(data, '\n')
			}
			data = append(data, value...)
			starts, cols = append(starts, i+1), append(cols, col)
		}
	}
	return flush()
}

// jsonFault returns the syntax error of a value that is not JSON, or nil.
func jsonFault(b []byte) *json.SyntaxError {
	var v any
	err := json.Unmarshal(b, &v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return syn
	}
	if err != nil {
		return &json.SyntaxError{Offset: 0}
	}
	return nil
}

func (in stageInput) streamFault(line, col int, err *json.SyntaxError) error {
	msg := "not valid JSON"
	if err.Error() != "" {
		msg = err.Error()
	}
	return withCode(exitUsage, fmt.Errorf("%s: invalid JSON in the stream at line %d, column %d: %s", in.name, line, col, msg))
}
