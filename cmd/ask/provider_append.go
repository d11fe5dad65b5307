package main

import (
	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/stage"
)

func providerAppendCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "append",
		Usage:     "a request, the reply to it and its tool results → the next request",
		ArgsUsage: "--reply FILE [--results FILE] [REQUEST|-]",
		Description: "Adds the reply's assistant turn, verbatim (thinking blocks, signatures and reasoning items\n" +
			"included), and the tool results in the provider's form to the request's conversation; nothing\n" +
			"else in the request changes. A loop of send, parse-tool-calls, tools run and append takes every\n" +
			"step of a run by hand (see EXAMPLES in man ask).\n\n" +
			"Examples:\n" +
			"   ask provider append -p openai --reply reply.sse --results results.json request.json > next.json\n" +
			"   ask tools run calls.json | ask provider append -p anthropic --reply reply.sse --results - request.json",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reply", Usage: "the response body or recorded stream the request got, in `FILE` (- for stdin), as ask provider send printed it"},
			&cli.StringFlag{Name: "results", Usage: "the results of the reply's tool calls, in `FILE` (- for stdin), as ask tools run printed them"},
		},
		Action: func(c *cli.Context) error { return providerAppend(c, stdio) },
	}
}

// stdinTTY is what append says when the input it reads from stdin would
// come from a terminal.
const stdinTTY = "ask provider append: stdin is a terminal: pipe the input in or name a file"

// providerAppend builds the next request of a run taken step by step: the
// request as it was, with the assistant turn of its reply and the results
// of the turn's calls at the end of its conversation, as the loop does.
func providerAppend(c *cli.Context, stdio *IO) error {
	replyName, resultsName := c.String("reply"), c.String("results")
	if replyName == "" {
		return usageErr("ask provider append: --reply is required: the response the request got (ask provider send prints it)")
	}
	stdinUsers := 0
	for _, fromStdin := range []bool{replyName == "-", resultsName == "-", c.Args().First() == "" || c.Args().First() == "-"} {
		if fromStdin {
			stdinUsers++
		}
	}
	if stdinUsers > 1 {
		return usageErr("ask provider append: only one of the request, --reply and --results can be read from stdin: name files for the others")
	}
	request, err := readStageInput(c, stdio)
	if err != nil {
		return err
	}
	if err := request.CheckRequestBody(); err != nil {
		return err
	}
	reply, err := readNamedInput(stdio, replyName, stdinTTY)
	if err != nil {
		return err
	}
	prov, proto, form, err := stageProtocolForm(c, stdio)
	if err != nil {
		return err
	}
	if err := stage.Appendable(prov, proto, request); err != nil {
		return err
	}
	turn, err := stage.ReadReply(reply, prov, proto)
	if err != nil {
		return err
	}
	var results []providers.ToolResult
	if resultsName != "" {
		in, err := readNamedInput(stdio, resultsName, stdinTTY)
		if err != nil {
			return err
		}
		if results, err = stage.Parse(in, &[]providers.ToolResult{}, providers.ParseToolResultsJSON); err != nil {
			return err
		}
	}
	next, err := stage.Append(proto, form, request, turn, results, resultsName != "")
	if err != nil {
		return err
	}
	return writeStageJSON(stdio, next)
}
