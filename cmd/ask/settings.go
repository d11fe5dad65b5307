package main

import (
	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/term"
)

// Settings are resolved once, by internal/run, from layers: the flags the
// user typed (flagSettings below), the conversation carried on, the
// environment, the config file and the defaults. Flags keep their built-in
// defaults only for --help; what a run uses comes from run.Resolve.

// resolve resolves the settings of the command c: its typed flags over
// the conversation, the environment, the config file and the defaults.
func resolve(c *cli.Context, stdio *IO) (run.Settings, error) {
	in, err := inputs(c, stdio)
	if err != nil {
		return run.Settings{}, err
	}
	return run.Resolve(in)
}

// inputs are the layers command c resolves its settings from.
func inputs(c *cli.Context, stdio *IO) (run.Inputs, error) {
	flags, err := flagSettings(c, stdio)
	if err != nil {
		return run.Inputs{}, err
	}
	return run.Inputs{
		Flags: flags, Continue: c.Bool("continue"), Resume: c.String("resume"),
		Getenv: stdio.Getenv, Config: stdio.config, Wd: stdio.Wd,
	}, nil
}

// useConfigFile reads the config file before urfave/cli parses the flags
// (the profile is a flag) and chooses the colours of stderr, which even an
// error in the flags is shown in.
func useConfigFile(line commandLine, stdio *IO) {
	profile, _ := line.mainFlag("profile")
	stdio.config = run.LoadConfig(stdio.Getenv, profile)
	stdio.helpDefaults = nil
	v, typed := line.mainFlag("color")
	stdio.color.mode, stdio.color.source = run.Color(v, typed, stdio.Getenv, stdio.config.Resolved)
	stdio.paint = term.ChooseColor(stdio.color.mode, stdio.Getenv, stdio.ErrTTY)
}
