package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/worktree"
)

// worktreeCommand is `ask worktree list|rm`: the git worktrees runs with
// --worktree kept (DESIGN §9).
func worktreeCommand(stdio *IO) *cli.Command {
	json := func(usage string) []cli.Flag { return []cli.Flag{&cli.BoolFlag{Name: "json", Usage: usage}} }
	return &cli.Command{
		Name:            "worktree",
		Action:          subcommandAction,
		Usage:           "the git worktrees runs with --worktree kept in this repository",
		UsageText:       "ask worktree list [--json]\n   ask worktree rm NAME... [--json]",
		HideHelpCommand: true,
		Subcommands: []*cli.Command{{
			Name:   "list",
			Usage:  "list the worktrees ask kept here: name, branch, path",
			Flags:  json("print a JSON array of {name, path, branch, base} (base: the commit checked out now)"),
			Action: func(c *cli.Context) error { return worktreeList(c, stdio) },
		}, {
			Name:      "rm",
			Usage:     "remove worktrees ask kept, with their ask/NAME branches",
			ArgsUsage: "NAME...",
			Flags:     json("print a JSON array of the worktrees removed"),
			Action:    func(c *cli.Context) error { return worktreeRm(c, stdio) },
		}},
	}
}

func worktreeList(c *cli.Context, stdio *IO) error {
	if c.NArg() > 0 {
		return usageErr("worktree list takes no arguments")
	}
	list, err := worktree.List(c.Context, stdio.Wd)
	if err != nil {
		return worktreeErr(err)
	}
	if c.Bool("json") {
		return writeJSON(stdio.Out, nonNil(list), stdio.OutTTY)
	}
	for _, w := range list {
		fmt.Fprintf(stdio.Out, "%s\t%s\t%s\n", termtext.Safe(w.Name), termtext.Safe(w.Branch), termtext.Safe(w.Path))
	}
	return nil
}

func worktreeRm(c *cli.Context, stdio *IO) error {
	if c.NArg() == 0 {
		return usageErr("worktree rm: name the worktrees to remove (ask worktree list lists them)")
	}
	var removed []worktree.Worktree
	for _, name := range c.Args().Slice() {
		w, err := worktree.Remove(c.Context, stdio.Wd, name)
		if err != nil {
			return worktreeErr(err)
		}
		removed = append(removed, w)
		if !c.Bool("json") {
			fmt.Fprintf(stdio.Out, "removed %s (branch %s)\n", termtext.Safe(w.Path), termtext.Safe(w.Branch))
		}
	}
	if c.Bool("json") {
		return writeJSON(stdio.Out, removed, stdio.OutTTY)
	}
	return nil
}

// worktreeErr gives a worktree's error its exit code: 2 for what the
// person asked that cannot be done, else 1.
func worktreeErr(err error) error {
	if errors.Is(err, worktree.ErrUsage) {
		return usageErr("%v", err)
	}
	return withCode(exitFailure, err)
}
