package main

import (
	"encoding/json"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/table"
)

func mcpCommand(stdio *IO) *cli.Command {
	flags := []cli.Flag{
		&cli.BoolFlag{Name: "tools", Usage: "start each enabled server and list its tools, or say why it failed"},
		&cli.BoolFlag{Name: "json", Usage: "print a JSON array of the servers"},
	}
	return &cli.Command{
		Name:            "mcp",
		Action:          subcommandAction,
		Usage:           "the MCP servers a run starts: the config file's mcpServers and --mcp",
		HideHelpCommand: true,
		Subcommands: []*cli.Command{{
			Name:  "list",
			Usage: "list the MCP servers (the config file's, disabled ones included, and those --mcp names), with --tools their tools",
			Description: "Values of env and headers are never shown, only their names. With --tools a server that\n" +
				"fails is listed with its error, and the exit code is 1 (4 when a server refused its credentials).",
			Flags:  flags,
			Action: func(c *cli.Context) error { return mcpList(c, stdio) },
		}},
	}
}

func mcpList(c *cli.Context, stdio *IO) error {
	if c.NArg() > 0 {
		return usageErr("mcp list takes no arguments")
	}
	s, err := resolve(c, stdio)
	if err != nil {
		return err
	}
	env := runEnv(c, stdio, statusFor(stdio, c.Bool("quiet")))
	entries, err := run.ListMCP(c.Context, s, stdio.config, env, c.Bool("tools"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		out, err := json.Marshal(nonNil(entries))
		if err != nil {
			return err
		}
		if err := writeStageJSON(stdio, out); err != nil {
			return err
		}
	} else if err := table.MCP(stdio.Out, entries); err != nil {
		return err
	}
	return run.MCPFailures(entries)
}
