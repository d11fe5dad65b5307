package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/stage"
	"github.com/ask-cli/ask/internal/table"
)

func toolsCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:            "tools",
		Action:          subcommandAction,
		Usage:           "the tools the model is offered: list them, show one, run calls",
		UsageText:       "ask tools COMMAND [flags] [INPUT]",
		HideHelpCommand: true,
		Subcommands: []*cli.Command{
			{
				Name:   "list",
				Usage:  "list the tools the mode and flags would declare: a table on a terminal, standardized tools JSON in a pipe",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the standardized tools JSON even on a terminal"}},
				Action: func(c *cli.Context) error { return toolsList(c, stdio) },
			},
			{
				Name:      "show",
				Usage:     "print one tool's full declaration: description, parameters, risk, approval",
				ArgsUsage: "NAME",
				Action:    func(c *cli.Context) error { return toolsShow(c, stdio) },
			},
			{
				Name:      "run",
				Usage:     "standardized tool calls on stdin → standardized results, under the run's policy",
				ArgsUsage: "[FILE|-]",
				Description: "Each call is checked by the policy first (mode, --safe, --allow-tool, --deny-tool, approval);\n" +
					"a denied call becomes an error result. A refusal by --safe exits 6 after printing the results.",
				Action: func(c *cli.Context) error { return toolsRun(c, stdio) },
			},
		},
	}
}

func toolsList(c *cli.Context, stdio *IO) error {
	if c.NArg() > 0 {
		return usageErr("tools list takes no arguments (ask tools show NAME shows one tool)")
	}
	r, err := offlineRun(c, stdio)
	if err != nil {
		return err
	}
	defer r.Close()
	if stdio.OutTTY && !c.Bool("json") {
		return table.Tools(stdio.Out, r.Mode, r.DeclaredInfo())
	}
	out, err := providers.MarshalTools(r.Declared)
	if err != nil {
		return err
	}
	return writeStageJSON(stdio, out)
}

func toolsShow(c *cli.Context, stdio *IO) error {
	if c.NArg() != 1 {
		return usageErr("tools show takes one tool name (ask tools list shows them)")
	}
	name := c.Args().First()
	r, err := offlineRun(c, stdio)
	if err != nil {
		return err
	}
	defer r.Close()
	info, err := r.ToolDeclaration(name)
	if err != nil {
		return err
	}
	return writeStageValue(stdio, info)
}

// toolsRun runs standardized calls with the loop's own loop.RunCalls: the
// policy decides every call first (asking on a terminal when a call needs
// approval), the allowed ones run concurrently, and the results come out
// in call order, each call answered.
func toolsRun(c *cli.Context, stdio *IO) error {
	in, err := readStageInput(c, stdio)
	if err != nil {
		return err
	}
	if in, err = stage.TypedCalls(in); err != nil {
		return err
	}
	calls, err := stage.Parse(in, &[]providers.ToolCall{}, providers.ParseToolCallsJSON)
	if err != nil {
		return err
	}
	r, err := offlineRun(c, stdio)
	if err != nil {
		return err
	}
	defer r.Close()
	results, runErr := r.RunCalls(c.Context, calls, func(call providers.ToolCall, v policy.Verdict) {
		if !c.Bool("quiet") {
			fmt.Fprintf(stdio.Err, "ask: %s denied: %s\n", call.Name, v.Reason)
		}
	})
	if err := writeStageValue(stdio, results); err != nil {
		return err
	}
	return runErr
}
