package main

import (
	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/acp"
	"github.com/ask-cli/ask/internal/history"
)

// acpCommand is `ask acp`: ask as an editor's agent over the Agent Client
// Protocol (DESIGN §9, Editors).
func acpCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "acp",
		Usage:     "speak the Agent Client Protocol on stdin and stdout, for an editor (Zed, Neovim, Emacs, ...)",
		UsageText: "ask acp [flags]",
		Description: `Runs ask as an ACP agent (v1, JSON-RPC over stdio): an editor starts it,
opens sessions and sends prompts. stdout carries only the protocol;
diagnostics go to stderr; ask exits 0 when stdin closes.

The run flags typed here are every session's policy: a session may narrow
them (a cwd inside --workdir, a stricter mode), never widen them. Its
approvals are the editor's permission requests, asked only after the rules,
hooks, --yes and --safe have decided. Each session is one kept run (ask log
show ID), so the editor can load it again later.`,
		Action: func(c *cli.Context) error { return acpAction(c, stdio) },
	}
}

func acpAction(c *cli.Context, stdio *IO) error {
	if c.NArg() > 0 {
		return usageErr("acp takes no prompt (the editor sends them), got %q", c.Args().First())
	}
	if c.Bool("continue") || c.String("resume") != "" {
		return usageErr("--continue and --resume do not apply to ask acp: the editor carries a session on with session/load")
	}
	s, err := resolve(c, stdio)
	if err != nil {
		return err
	}
	store, err := history.Open(stdio.Getenv)
	if err != nil {
		return usageErr("%v", err)
	}
	env := runEnv(c, stdio, statusFor(stdio, true))
	env.Notes = stdio.Err
	env.MCPStarting = nil
	return acp.Serve(c.Context, stdio.In, stdio.Out, acp.Config{
		Settings: s, Env: env, History: &store, Log: stdio.Err, Version: versionString(),
	})
}
