package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/table"
)

// logCommand is `ask log`: the runs kept under $XDG_STATE_HOME/ask
// (internal/history), newest first; any of them can be continued with
// --resume ID.
func logCommand(stdio *IO) *cli.Command {
	jsonFlag := func(usage string) []cli.Flag {
		return []cli.Flag{&cli.BoolFlag{Name: "json", Usage: usage}}
	}
	listUsage := "print a JSON array of {id, time, workdir, provider, model, prompt, status}"
	return &cli.Command{
		Name:      "log",
		Usage:     "the runs kept under $XDG_STATE_HOME/ask, newest first (continue one with ask --resume ID)",
		ArgsUsage: " ",
		Flags:     jsonFlag(listUsage),
		Action:    func(c *cli.Context) error { return logList(c, stdio, "") },
		Subcommands: []*cli.Command{
			{
				Name:   "list",
				Usage:  "list the kept runs: id, time, status, working directory, prompt",
				Flags:  jsonFlag(listUsage),
				Action: func(c *cli.Context) error { return logList(c, stdio, "") },
			},
			{
				Name:      "show",
				Usage:     "show run ID (or the start of its id, or last: the newest run here): its prompt, steps and answer",
				ArgsUsage: "ID|last",
				Flags:     jsonFlag("print the transcript's events, one JSON object a line"),
				Action:    func(c *cli.Context) error { return logShow(c, stdio) },
			},
			{
				Name:      "search",
				Usage:     "list the kept runs whose prompt or answer holds TEXT (case ignored)",
				ArgsUsage: "TEXT",
				Flags:     jsonFlag(listUsage),
				Action: func(c *cli.Context) error {
					if c.NArg() == 0 {
						return usageErr("ask log search: give the TEXT to look for")
					}
					return logList(c, stdio, strings.Join(c.Args().Slice(), " "))
				},
			},
			logDiffCommand(stdio),
		},
	}
}

func openHistory(stdio *IO) (history.Store, error) {
	store, err := history.Open(stdio.Getenv)
	if err != nil {
		return store, usageErr("%v", err)
	}
	store.Migrate(stdio.Getenv)
	return store, nil
}

// logList prints the kept runs, those holding text when it is not "".
func logList(c *cli.Context, stdio *IO, text string) error {
	if text == "" && c.NArg() > 0 {
		return subcommandAction(c)
	}
	store, err := openHistory(stdio)
	if err != nil {
		return err
	}
	var runs []history.Entry
	if text == "" {
		runs, err = store.List()
	} else {
		runs, err = store.Search(text)
	}
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("read the kept runs: %w", err))
	}
	if c.Bool("json") {
		return writeJSON(stdio.Out, nonNil(runs), stdio.OutTTY)
	}
	if len(runs) == 0 {
		switch {
		case store.Dir == "":
			fmt.Fprintln(stdio.Err, "ask: no runs are kept (ASK_HISTORY_RUNS or ASK_HISTORY_SIZE is 0, or neither XDG_STATE_HOME nor HOME is set)")
		case c.Bool("quiet"):
		case text != "":
			fmt.Fprintf(stdio.Err, "ask: no kept run matches %q (in %s)\n", text, store.Dir)
		default:
			fmt.Fprintf(stdio.Err, "ask: no runs yet: each run is kept in %s once it is made\n", store.Dir)
		}
		return nil
	}
	return table.Runs(stdio.Out, history.Nest(runs), stdio.Getenv("HOME"))
}

// logShow prints one kept run.
func logShow(c *cli.Context, stdio *IO) error {
	if c.NArg() != 1 {
		return usageErr("ask log show: give one run's ID, or last (ask log lists them)")
	}
	store, err := openHistory(stdio)
	if err != nil {
		return err
	}
	e, err := store.Resolve(c.Args().First(), keptRunsDir(c, stdio))
	if err != nil {
		return usageErr("ask log show: %v", err)
	}
	events, err := records.ReadFile(e.Path)
	if err != nil {
		return withCode(exitFailure, err)
	}
	if c.Bool("json") {
		// JSON lines, as --events and the transcript: jq filters each.
		for _, ev := range events {
			if err := writeJSON(stdio.Out, ev, false); err != nil {
				return err
			}
		}
		return nil
	}
	history.Describe(stdio.Out, e, events)
	return nil
}
