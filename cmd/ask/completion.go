package main

import (
	"io"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/completion"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/tools"
)

// Completion scripts are generated from the app's own commands and flags,
// so they never fall behind: internal/completion writes them from a tree
// this file reads off the app, with the values the flags accept.

func completionCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh or fish",
		UsageText: "ask completion bash|zsh|fish",
		Description: `Load the script in the current shell, or install it for every new one:

  bash:  source <(ask completion bash)
         ask completion bash > ~/.local/share/bash-completion/completions/ask
  zsh:   source <(ask completion zsh)
         ask completion zsh > "${fpath[1]}/_ask"
  fish:  ask completion fish > ~/.config/fish/completions/ask.fish`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("completion takes one shell: bash, zsh or fish")
			}
			script := completion.For(c.Args().First())
			if script == nil {
				return usageErr("completion: unknown shell %q: choose bash, zsh or fish", c.Args().First())
			}
			// A fresh app: the running one has been set up by urfave/cli,
			// which adds help commands and flags to some commands only.
			_, err := io.WriteString(stdio.Out, script(completionTree(newApp(stdio))))
			return err
		},
	}
}

// completionTree reads an app that has not run: its flags and commands as
// declared, with the help and version flags urfave/cli adds when it runs.
func completionTree(app *cli.App) *completion.Command {
	flags := app.VisibleFlags()
	if !app.HideHelp {
		flags = append(flags, cli.HelpFlag)
	}
	if !app.HideVersion {
		flags = append(flags, cli.VersionFlag)
	}
	return &completion.Command{Name: app.Name, Usage: app.Usage, Flags: completionFlags(flags), Subcommands: completionCommands("ask", app.Flags, app.VisibleCommands())}
}

// completionCommands are the commands cmds under parent, each with its own
// flags and those of the main command's flags (mainFlags) it reads.
func completionCommands(parent string, mainFlags []cli.Flag, cmds []*cli.Command) []*completion.Command {
	var out []*completion.Command
	for _, c := range cmds {
		if c.Name == "help" {
			continue
		}
		full := parent + " " + c.Name
		flags := c.VisibleFlags()
		for _, f := range mainFlags {
			if slices.Contains(runFlagsRead[full], f.Names()[0]) {
				flags = append(flags, f)
			}
		}
		if !c.HideHelp {
			flags = append(flags, cli.HelpFlag)
		}
		n := &completion.Command{Name: c.Name, Aliases: c.Aliases, Usage: c.Usage, Flags: completionFlags(flags), Subcommands: completionCommands(full, mainFlags, c.VisibleCommands())}
		switch full {
		case "ask completion":
			n.Args = completion.Shells()
		case "ask tools show":
			// The built-in tools; the names a tools file or an MCP server
			// adds are known only once they are loaded.
			n.Args = tools.BuiltinNames()
		}
		out = append(out, n)
	}
	return out
}

// completionFlags adds to each flag what its value is: fixed words, a
// file, a directory, or anything.
func completionFlags(flags []cli.Flag) []completion.Flag {
	var out []completion.Flag
	for _, f := range flags {
		names := f.Names()
		cf := completion.Flag{Names: names}
		if df, ok := f.(cli.DocGenerationFlag); ok {
			cf.Usage, cf.TakesValue = completion.MenuUsage(df.GetUsage()), df.TakesValue()
			cf.Placeholder = completion.Placeholder(df.GetUsage())
		}
		cf.Repeatable = kindOf(f) == settings.List
		row, isRow := settings.Lookup(names[0])
		switch {
		case names[0] == "provider":
			cf.Values = catalog.Names()
		case isRow && len(row.Choices) > 0:
			cf.Values = row.Choices
		case names[0] == "workdir":
			cf.Kind = completion.Dir
		case names[0] == "profile":
			cf.ValuesFrom = "ask config --profiles"
		default:
			cf.Kind = map[string]completion.Kind{"FILE": completion.File, "DIR": completion.Dir}[cf.Placeholder]
		}
		out = append(out, cf)
	}
	return out
}
