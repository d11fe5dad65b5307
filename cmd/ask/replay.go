package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/demo"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/run"
)

func replayCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "re-run a recorded transcript offline; with no FILE, the built-in demo",
		ArgsUsage: "[FILE|ID|last]",
		Description: "The recorded responses stand in for the network; the tools really run, in --workdir, under this\n" +
			"invocation's policy (a terminal's approvals, --yes, --allow-tool, --deny-tool, --safe), never under the\n" +
			"decisions the transcript records: it may have been edited.\n" +
			"With no FILE, ask replays its built-in demo session in a fresh copy of the demo project.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "check", Usage: "exit 1 with a diff when the requests this build makes differ from the recorded ones"},
			&cli.BoolFlag{Name: "recorded-results", Usage: "use the recorded tool results instead of running the tools"},
		},
		Action: func(c *cli.Context) error { return replayAction(c, stdio) },
	}
}

// keptTranscript is the transcript of the kept run ref names (an id, the
// start of one, or last).
func keptTranscript(stdio *IO, ref string) ([]byte, error) {
	store, err := history.Open(stdio.Getenv)
	if err != nil {
		return nil, err
	}
	e, err := store.Resolve(ref, stdio.Wd)
	if err != nil {
		return nil, fmt.Errorf("%s is no file, and %w", ref, err)
	}
	return os.ReadFile(e.Path)
}

// transcriptNamed is the transcript name gives. A word that may name a
// kept run (last, an id or its start) is that run before a file of its
// name: the checkout's file last must not stand in for the person's own
// run (./last names the file). Anything else is a file, else a kept run.
func transcriptNamed(stdio *IO, name string) ([]byte, error) {
	if !strings.Contains(name, "/") && !strings.Contains(name, ".json") {
		if data, err := keptTranscript(stdio, name); err == nil {
			return data, nil
		}
	}
	data, err := os.ReadFile(run.AbsPath(stdio.Wd, name))
	if errors.Is(err, fs.ErrNotExist) {
		return keptTranscript(stdio, name)
	}
	return data, err
}

func replayAction(c *cli.Context, stdio *IO) error {
	if c.NArg() > 1 {
		return usageErr("replay takes one transcript file, got %d arguments", c.NArg())
	}
	if c.Bool("json") && c.Bool("events") {
		return usageErr("--json and --events both write to stdout: choose one")
	}
	var data []byte
	// The run's settings are the main command's flags (read through the
	// lineage), the environment and the config file, as for every command;
	// which of them the transcript gives instead is its rows' mark
	// (settings.Row.Recorded).
	inv, err := resolve(c, stdio)
	if err != nil {
		return err
	}
	workdir := run.AbsPath(stdio.Wd, cmp.Or(inv.Workdir.Value, "."))
	switch name := c.Args().First(); name {
	case "":
		data = demo.Transcript()
		if !inv.Workdir.IsGiven() || inv.Workdir.Source == "default" {
			dir, cleanup, err := demo.Workspace()
			if err != nil {
				return err
			}
			defer cleanup()
			workdir = dir
		}
	case "-":
		data, err = io.ReadAll(stdio.In)
	default:
		data, err = transcriptNamed(stdio, name)
	}
	if err != nil {
		return usageErr("replay: %v", err)
	}
	events, err := records.Read(bytes.NewReader(data))
	if err != nil {
		return usageErr("replay: %v", err)
	}
	if c.Args().First() == "" && inv.Yes.Source == "default" {
		// The built-in demo is part of this binary, not a file anyone can
		// edit, and its calls act on a fresh copy of its own project.
		inv.Yes = run.Given(true, "the built-in demo")
	}
	s, prompt, recorded, err := run.FromTranscript(events, run.ReplayOptions{
		Check: c.Bool("check"), RecordedResults: c.Bool("recorded-results"), Workdir: workdir, Invocation: inv.Values,
	})
	if err != nil {
		return err
	}
	if err := checkQuietVerbose(c); err != nil {
		return err
	}
	quiet := c.Bool("quiet")
	status := statusFor(stdio, quiet)
	r, err := buildRun(c, stdio, status, s, func(env *run.Env) { env.Replay = recorded })
	if err != nil {
		return err
	}
	defer r.Close()
	runErr := execute(c.Context, r, prompt, stdio, status, presentation{
		jsonOut: c.Bool("json"), events: c.Bool("events"), transcript: c.String("transcript"),
		quiet: quiet, verbose: c.Bool("verbose"),
	})
	if c.Bool("check") {
		if diffs := recorded.Report(); diffs != "" {
			fmt.Fprint(stdio.Err, diffs)
			return withCode(exitFailure, fmt.Errorf("replay --check: the requests differ from the recorded ones"))
		}
	}
	return runErr
}
