package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/stage"
)

// The stages (`ask provider ...`, `ask tools run`) share one input and
// output discipline: JSON in from stdin (or a file, or "-"), JSON out,
// compact in a pipe and indented on a terminal, and malformed input
// rejected with exit 2 and the position of the fault.

// readStageInput reads the stage's one optional argument: a file, or "-"
// (and no argument) for stdin.
func readStageInput(c *cli.Context, stdio *IO) (stage.Input, error) {
	if c.NArg() > 1 {
		return stage.Input{}, usageErr("%s reads one input, got %d arguments: pipe the JSON in, or name one file", commandPath(c), c.NArg())
	}
	path := commandPath(c)
	return readNamedInput(stdio, cmp.Or(c.Args().First(), "-"), fmt.Sprintf("%s reads JSON on stdin: pipe it in (... | %s) or name a file", path, path))
}

// readNamedInput reads a stage's input: a file, or "-" for stdin. A
// terminal on stdin is refused, with onTTY, rather than waited on.
func readNamedInput(stdio *IO, name, onTTY string) (stage.Input, error) {
	if name != "-" {
		data, err := os.ReadFile(run.AbsPath(stdio.Wd, name))
		if err != nil {
			return stage.Input{}, usageErr("read input: %v", err)
		}
		return stage.Input{Name: name, Data: data}, nil
	}
	if stdio.InTTY || stdio.In == nil {
		return stage.Input{}, usageErr("%s", onTTY)
	}
	data, err := io.ReadAll(stdio.In)
	if err != nil {
		return stage.Input{}, usageErr("read stdin: %v", err)
	}
	return stage.Input{Name: "stdin", Data: data}, nil
}

// readStage reads a stage's input in the standardized format: the JSON
// read and decoded into shape (which names the position
// of a wrong value), then parsed.
func readStage[T any](c *cli.Context, stdio *IO, shape any, parse func([]byte) (T, error)) (T, error) {
	in, err := readStageInput(c, stdio)
	if err != nil {
		var zero T
		return zero, err
	}
	return stage.Parse(in, shape, parse)
}

// writeStageJSON prints raw JSON, indented on a terminal and compact in a
// pipe, on one line of its own.
func writeStageJSON(stdio *IO, raw []byte) error {
	return stage.WriteJSON(stdio.Out, stdio.OutTTY, raw)
}

// writeStageValue marshals v and prints it as writeStageJSON does.
func writeStageValue(stdio *IO, v any) error { return stage.WriteValue(stdio.Out, stdio.OutTTY, v) }

// commandPath is a subcommand's full name, such as "ask provider send".
func commandPath(c *cli.Context) string {
	var names []string
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && ctx.Command.Name != "" {
			names = append([]string{ctx.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// subcommandAction is the action of a command that only groups others:
// help without arguments, a usage error (exit 2) for an unknown name.
func subcommandAction(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.ShowSubcommandHelp(c)
	}
	var names []string
	for _, sub := range c.Command.Subcommands {
		names = append(names, sub.Name)
	}
	return usageErr("%s: unknown command %q: choose %s", commandPath(c), c.Args().First(), strings.Join(names, ", "))
}
