package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/undo"
)

// undoCommand is `ask undo`: put back what a run changed, file by file,
// where each file is still as the run left it (DESIGN §6).
func undoCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "put back the files a run changed (default: the last run here), each only if it is still as the run left it",
		ArgsUsage: "[ID|last]",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json",
			Usage: "print a JSON array of {path, action, reason}: action is restored, removed, unchanged or left"}},
		Action: func(c *cli.Context) error { return undoRun(c, stdio) },
	}
}

// logDiffCommand is `ask log diff`: a run's changes as a patch.
func logDiffCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "print the files run ID (or last: the newest run here) changed as a patch git apply takes",
		ArgsUsage: "[ID|last]",
		Action:    func(c *cli.Context) error { return logDiff(c, stdio) },
	}
}

// changedRun reads the run ref names (default: the last run here) and
// folds its file changes.
func changedRun(c *cli.Context, stdio *IO, name string) (undo.Run, history.Entry, error) {
	ref := history.LastWord
	switch c.NArg() {
	case 0:
	case 1:
		ref = c.Args().First()
	default:
		// "ask undo the last commit" was meant for a model.
		typed := strings.TrimPrefix(name, "ask ") + " " + strings.Join(c.Args().Slice(), " ")
		return undo.Run{}, history.Entry{}, usageErr("%s: give one run's ID, or last (ask log lists them); to send %q as a prompt, put -- before it: ask -- %s",
			name, typed, typed)
	}
	store, err := openHistory(stdio)
	if err != nil {
		return undo.Run{}, history.Entry{}, err
	}
	e, err := store.Resolve(ref, keptRunsDir(c, stdio))
	if err != nil {
		return undo.Run{}, history.Entry{}, usageErr("%s: %v", name, err)
	}
	run, err := undo.Load(e.Path, e.ID)
	if err != nil {
		return undo.Run{}, history.Entry{}, withCode(exitFailure, fmt.Errorf("%s: %w", name, err))
	}
	return run, e, nil
}

// keptRunsDir is the directory whose runs "last" means: --workdir's, as
// for -c, else the current one.
func keptRunsDir(c *cli.Context, stdio *IO) string {
	return run.Workdir(stdio.Wd, c.String("workdir"))
}

// logDiff prints a run's changes as a patch on stdout; the files it
// cannot show are named on stderr.
func logDiff(c *cli.Context, stdio *IO) error {
	run, _, err := changedRun(c, stdio, "ask log diff")
	if err != nil {
		return err
	}
	var patch bytes.Buffer
	skipped := run.Patch(c.Context, &patch)
	if _, err := stdio.Out.Write(patch.Bytes()); err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintf(stdio.Err, "ask: %s is not in the patch: %s\n", termtext.Safe(s.Path), termtext.Safe(s.Why))
	}
	return nil
}

// undoRun puts a run's files back and says, one line a file on stdout,
// what became of each; a file left alone makes the exit code 1.
func undoRun(c *cli.Context, stdio *IO) error {
	run, e, err := changedRun(c, stdio, "ask undo")
	if err != nil {
		return err
	}
	outcomes, err := run.Undo(c.Context)
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("ask undo: %w", err))
	}
	left := undo.Left(outcomes)
	if c.Bool("json") {
		if err := writeJSON(stdio.Out, nonNil(outcomes), stdio.OutTTY); err != nil {
			return err
		}
	} else {
		if len(outcomes) == 0 {
			fmt.Fprintf(stdio.Err, "ask: run %s (%s) changed no file\n", e.ID, termtext.Safe(termtext.Shorten(e.Prompt, 60)))
		}
		for _, o := range outcomes {
			fmt.Fprintln(stdio.Out, o)
		}
	}
	if left > 0 {
		return withCode(exitFailure, fmt.Errorf("ask undo: %s left as %s: see why above, and put %s back by hand (ask log diff shows what the run did)",
			termtext.Plural(left, "file", "files"), termtext.Agree(left, "it is", "they are"), termtext.Agree(left, "it", "them")))
	}
	return nil
}
