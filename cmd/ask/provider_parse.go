package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/textproto"
	"github.com/ask-cli/ask/internal/stage"
)

// providerParseToolCalls reads a response the way the loop does: one JSON
// body, or a whole recorded stream in the protocol's framing (SSE or
// NDJSON), told apart by its first bytes; for the command provider, the
// text the program printed. Under a text tool protocol the calls are read
// from the reply's text, for the tools a run would declare.
func providerParseToolCalls(c *cli.Context, stdio *IO) error {
	in, err := readStageInput(c, stdio)
	if err != nil {
		return err
	}
	prov, proto, form, err := stageProtocolForm(c, stdio)
	if err != nil {
		return err
	}
	turn, err := stage.ReadReply(in, prov, proto)
	if err != nil {
		return err
	}
	var problems []textproto.Problem
	if form != "" {
		declared, err := stageTools(c, stdio)
		if err != nil {
			return err
		}
		if problems, err = stage.ReadText(textproto.Wrap(proto, form, declared), turn); err != nil {
			return err
		}
		if !c.Bool("quiet") {
			for _, p := range problems {
				fmt.Fprintf(stdio.Err, "ask: %s: call %d of the reply could not be read and is left out: %s\n", in.Name, p.Call, strings.Join(strings.Fields(p.Message), " "))
			}
		}
	}
	calls := stage.Runnable(turn.Calls)
	if c.Bool("text") {
		return writeStageValue(stdio, stage.ParsedReply{Text: turn.Text, ToolCalls: calls, Terminate: turn.Terminate, Problems: problems})
	}
	return writeStageValue(stdio, calls)
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
