package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/table"
)

// sandboxCommand is `ask sandbox check`: what --sandbox can do on this
// machine, and why not where it cannot.
func sandboxCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:            "sandbox",
		Action:          subcommandAction,
		Usage:           "what each layer of --sandbox can do here (namespaces, network, Landlock, seccomp, limits)",
		UsageText:       "ask sandbox check [--json]",
		HideHelpCommand: true,
		Subcommands: []*cli.Command{{
			Name:  "check",
			Usage: "say whether each layer of the sandbox works here, how, and why not; exit 1 if a command could not be confined",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON even on a terminal"}},
			Action: func(c *cli.Context) error {
				check := sandbox.CheckCommands
				if stdio.sandboxCheck != nil {
					check = stdio.sandboxCheck
				}
				return sandboxCheck(c, stdio, check())
			},
		}},
	}
}

func sandboxCheck(c *cli.Context, stdio *IO, s sandbox.Support) error {
	if c.NArg() > 0 {
		return usageErr("sandbox check takes no arguments")
	}
	r := sandbox.Describe(s)
	var err error
	if stdio.OutTTY && !c.Bool("json") {
		err = table.Sandbox(stdio.Out, r)
	} else {
		err = writeStageValue(stdio, r)
	}
	if err != nil {
		return err
	}
	if why := r.Shortfall(); why != "" {
		return withCode(exitFailure, errors.New(why))
	}
	return nil
}
