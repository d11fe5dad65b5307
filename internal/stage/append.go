package stage

import (
	"fmt"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/providers/textproto"
)

// Parse decodes in into shape, which names the position of a value of the
// wrong type, then parses it; a fault parse finds is in.Fault.
func Parse[T any](in Input, shape any, parse func([]byte) (T, error)) (T, error) {
	var zero T
	if err := in.Decode(shape); err != nil {
		return zero, err
	}
	v, err := parse(in.Data)
	if err != nil {
		return zero, in.Fault(err)
	}
	return v, nil
}

// Appendable checks, before the reply is read, that request is a request
// of prov's, which `ask provider append` can add a turn to: a local
// program has none, and a request of another provider is told here.
func Appendable(prov catalog.Provider, proto providers.Protocol, request Input) error {
	if prov.LocalProgram {
		return fault.Usagef("%s runs a local program, not an HTTP API: it has no request to append to", prov.Name)
	}
	if _, err := providers.AppendHistory(proto, request.Data, nil); err != nil {
		return usage(fmt.Errorf("%s: %w", request.Name, err))
	}
	return nil
}

// Append is the next request of a run taken step by step: request as it
// was, with the assistant turn of its reply and the results of the turn's
// calls at the end of its conversation, as the loop builds it. Under a text
// tool protocol (form) the results are one user message of <tool_result>
// blocks; otherwise a turn that calls tools needs its results
// (withResults says whether --results was given).
func Append(proto providers.Protocol, form textproto.Form, request Input, turn *providers.Turn, results []providers.ToolResult, withResults bool) ([]byte, error) {
	if form != "" {
		// The results' message needs no tools.
		proto = textproto.Wrap(proto, form, nil)
	} else if len(turn.Calls) > 0 && !withResults {
		return nil, fault.Usagef("ask provider append: the reply calls %d tool(s): give their results with --results (ask tools run prints them)", len(turn.Calls))
	}
	msgs := turn.Messages
	if len(results) > 0 {
		formatted, err := proto.FormatToolResults(results)
		if err != nil {
			return nil, usage(fmt.Errorf("format tool results for %s: %w", proto.Name(), err))
		}
		msgs = append(msgs, formatted...)
	}
	next, err := providers.AppendHistory(proto, request.Data, msgs)
	if err != nil {
		return nil, usage(fmt.Errorf("%s: %w", request.Name, err))
	}
	return next, nil
}
