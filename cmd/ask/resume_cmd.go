package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/termtext"
)

// resumeCommand is `ask resume`: carry on a deferred run (DESIGN §9).
func resumeCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "resume",
		Usage:     "carry on a deferred run, deciding the calls it waits on",
		ArgsUsage: "ID|last [--approve CALL|all] [--deny CALL[=REASON]|all]",
		Description: "A run whose calls were deferred (--defer-tool, --on-approval defer, a PreToolUse hook's \"defer\")\n" +
			"ends with status deferred, exit 7. ask resume puts each waiting call to this invocation's policy:\n" +
			"its rules, --safe, sandbox and hooks (run again) decide first, and a deny wins; --approve answers\n" +
			"the approval question a call would ask; --deny refuses it, its REASON told to the model. A call\n" +
			"left undecided (no terminal, no --approve) keeps the run deferred, exit 7 again. Then the run goes\n" +
			"on as any run, under the same id. Nothing in the transcript is a grant: it only says which calls wait.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "approve", Usage: "approve the deferred call `CALL` (its id), or all; repeatable"},
			&cli.StringSliceFlag{Name: "deny", Usage: "deny the deferred call `CALL[=REASON]`, or all; repeatable"},
		},
		Action: func(c *cli.Context) error { return resumeAction(c, stdio) },
	}
}

func resumeAction(c *cli.Context, stdio *IO) error {
	if c.Bool("json") && c.Bool("events") {
		return usageErr("--json and --events both write to stdout: choose one")
	}
	if err := checkQuietVerbose(c); err != nil {
		return err
	}
	if c.NArg() != 1 {
		return usageErr("ask resume takes one run: its ID, or last (the newest run here); ask log lists them")
	}
	decisions, err := run.ParseDecisions(c.StringSlice("approve"), c.StringSlice("deny"))
	if err != nil {
		return err
	}
	flags, err := flagSettings(c, stdio)
	if err != nil {
		return err
	}
	s, err := run.Resolve(run.Inputs{Flags: flags, Resume: c.Args().First(), Paused: true,
		Getenv: stdio.Getenv, Config: stdio.config, Wd: stdio.Wd})
	if err != nil {
		return err
	}
	quiet := c.Bool("quiet")
	status := statusFor(stdio, quiet)
	r, err := buildRun(c, stdio, status, s, func(env *run.Env) { env.Decisions = decisions })
	if err != nil {
		return err
	}
	defer r.Close()
	if !quiet {
		for _, w := range r.Waiting() {
			fmt.Fprintf(stdio.Err, "ask: waiting: %s %s %s\n", w.ID, w.Name, termtext.Shorten(termtext.Safe(w.Arguments), 100))
		}
	}
	return execute(c.Context, r, "", stdio, status, presentation{
		jsonOut: c.Bool("json"), events: c.Bool("events"), transcript: c.String("transcript"),
		quiet: quiet, verbose: c.Bool("verbose"), keep: true,
	})
}

// deferredHint is what stderr says when a run ends deferred: how to go on.
func deferredHint(id string) string {
	if id == "" {
		id = history.LastWord
	}
	return fmt.Sprintf("ask resume %s --approve CALL|all or --deny CALL|all decides them (ask log show %s lists them)", id, id)
}
