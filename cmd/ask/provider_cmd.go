package main

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/providers/textproto"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/stage"
	"github.com/ask-cli/ask/internal/table"
)

// providerCommand is `ask provider`: each stage of one provider's side of
// the loop on its own, JSON in and JSON out, so that a step can be taken by
// hand or by a script (see the pipeline in man/ask.1).
func providerCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:            "provider",
		Action:          subcommandAction,
		Usage:           "run one provider stage at a time, JSON in and JSON out",
		UsageText:       "ask provider COMMAND [flags] [INPUT]",
		HideHelpCommand: true,
		Subcommands: []*cli.Command{
			{
				Name:   "list",
				Usage:  "list the providers: protocol, base URL, key variables (set or not), tool and streaming support",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON even on a terminal"}},
				Action: func(c *cli.Context) error { return providerList(c, stdio) },
			},
			{
				Name:      "format-tools",
				Usage:     "standardized tools on stdin → the provider's tools JSON",
				ArgsUsage: "[FILE|-]",
				Action:    func(c *cli.Context) error { return providerFormatTools(c, stdio) },
			},
			{
				Name:      "parse-tool-calls",
				Usage:     "a response body or a recorded stream on stdin (a command model's reply text) → standardized tool calls",
				ArgsUsage: "[FILE|-]",
				Description: "With a text tool protocol (--tool-protocol json or markdown; auto for the command provider) the calls\n" +
					"are read from the reply's text, for the tools the mode and tool flags declare, as a run reads them.",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "text", Usage: `print {"text": ..., "tool_calls": [...]}: the reply's text as well as its calls`}},
				Action: func(c *cli.Context) error { return providerParseToolCalls(c, stdio) },
			},
			{
				Name:      "format-tool-result",
				Aliases:   []string{"format-tool-results"},
				Usage:     "standardized tool results on stdin → the message(s) the provider expects in history",
				ArgsUsage: "[FILE|-]",
				Action:    func(c *cli.Context) error { return providerFormatToolResult(c, stdio) },
			},
			providerRequestCommand(stdio),
			providerSendCommand(stdio),
			providerAppendCommand(stdio),
		},
	}
}

// stageProtocol is the provider a stage works for and its wire protocol,
// chosen as a run chooses them: the flag, ASK_PROVIDER, the config file,
// the first key set; with the config file's settings for it.
func stageProtocol(c *cli.Context, stdio *IO) (catalog.Provider, providers.Protocol, error) {
	s, err := resolve(c, stdio)
	if err != nil {
		return catalog.Provider{}, nil, err
	}
	return s.Protocol()
}

// stageProtocolForm is stageProtocol with the text tool protocol the stage
// speaks ("" for native calls), from --tool-protocol as a run resolves it
// (the flag, the config file, auto).
func stageProtocolForm(c *cli.Context, stdio *IO) (catalog.Provider, providers.Protocol, textproto.Form, error) {
	s, err := resolve(c, stdio)
	if err != nil {
		return catalog.Provider{}, nil, "", err
	}
	return s.ProtocolForm()
}

func providerList(c *cli.Context, stdio *IO) error {
	if c.NArg() > 0 {
		return usageErr("provider list takes no arguments")
	}
	rows, err := run.Providers(run.Inputs{Getenv: stdio.Getenv, Config: stdio.config, Wd: stdio.Wd})
	if err != nil {
		return err
	}
	if stdio.OutTTY && !c.Bool("json") {
		return table.Providers(stdio.Out, rows)
	}
	return writeStageValue(stdio, rows)
}

func providerFormatTools(c *cli.Context, stdio *IO) error {
	tools, err := readStage(c, stdio, &[]stage.StandardTool{}, providers.ParseTools)
	if err != nil {
		return err
	}
	_, proto, err := stageProtocol(c, stdio)
	if err != nil {
		return err
	}
	out, err := proto.FormatTools(tools)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("format tools for %s: %w", proto.Name(), err))
	}
	if len(out) == 0 {
		out = json.RawMessage("[]")
	}
	return writeStageJSON(stdio, out)
}

func providerFormatToolResult(c *cli.Context, stdio *IO) error {
	results, err := readStage(c, stdio, &[]providers.ToolResult{}, providers.ParseToolResultsJSON)
	if err != nil {
		return err
	}
	_, proto, form, err := stageProtocolForm(c, stdio)
	if err != nil {
		return err
	}
	if form != "" {
		// One user message of <tool_result> blocks; it needs no tools.
		proto = textproto.Wrap(proto, form, nil)
	}
	msgs, err := proto.FormatToolResults(results)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("format tool results for %s: %w", proto.Name(), err))
	}
	return writeStageJSON(stdio, providers.JoinArray(msgs))
}
