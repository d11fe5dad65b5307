package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/term"
)

// Settings are resolved once, by internal/run, from layers: the flags the
// user typed (flagSettings below), the conversation carried on, the
// environment, the config file and the defaults. Flags keep their built-in
// defaults only for --help; what a run uses comes from run.Resolve.

// settingsFlags are the main command's flags about settings themselves.
func settingsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "profile", Usage: "use profile `NAME` of the config file over its top-level settings (default: $ASK_PROFILE)"},
		&cli.StringFlag{Name: "color", Value: term.ColorAuto, Usage: "colour on stderr: auto (on a terminal, unless NO_COLOR is set), always or never"},
	}
}

// flagSettings is the layer of typed flags: each flag the user gave, by
// its own name, and nothing else.
func flagSettings(c *cli.Context) run.Settings {
	var s run.Settings
	given := func(name string) (string, bool) { return "flag --" + name, c.IsSet(name) }
	for name, to := range map[string]*run.Setting[string]{
		"provider": &s.Provider, "model": &s.Model, "base-url": &s.BaseURL, "system": &s.System,
		"mode": &s.Mode, "tools-file": &s.ToolsFile, "workdir": &s.Workdir, "tool-protocol": &s.ToolProtocol,
		"command": &s.Command, "schema": &s.Schema, "sandbox": &s.Sandbox, "reasoning": &s.Reasoning,
	} {
		if src, ok := given(name); ok {
			*to = run.Given(c.String(name), src)
		}
	}
	for name, to := range map[string]*run.Setting[bool]{
		"safe": &s.Safe, "yes": &s.Yes, "no-tools": &s.NoTools, "no-stream": &s.NoStream, "no-cache": &s.NoCache,
		"allow-network": &s.AllowNetwork, "sandbox-mcp": &s.SandboxMCP, "no-project-file": &s.NoProjectFile,
	} {
		if src, ok := given(name); ok {
			*to = run.Given(c.Bool(name), src)
		}
	}
	for name, to := range map[string]*run.Setting[int]{
		"max-steps": &s.MaxSteps, "retries": &s.Retries, "max-tokens": &s.MaxTokens,
	} {
		if src, ok := given(name); ok {
			*to = run.Given(c.Int(name), src)
		}
	}
	for name, to := range map[string]*run.Setting[[]string]{
		"allow-tool": &s.Allow, "deny-tool": &s.Deny, "mcp": &s.MCP, "mcp-header": &s.MCPHeaders, "attach": &s.Attach,
	} {
		if src, ok := given(name); ok {
			*to = run.Given(c.StringSlice(name), src)
		}
	}
	if src, ok := given("temperature"); ok {
		s.Temperature = run.Given(c.Float64("temperature"), src)
	}
	if src, ok := given("timeout"); ok {
		s.Timeout = run.Given(c.Duration("timeout"), src)
	}
	return s
}

// resolve resolves the settings of the command c: its typed flags over
// the conversation, the environment, the config file and the defaults.
func resolve(c *cli.Context, stdio *IO) (run.Settings, error) {
	if m := c.String("color"); c.IsSet("color") && !slices.Contains(config.Colors, m) {
		return run.Settings{}, usageErr("--color %q: choose auto, always or never", m)
	}
	return run.Resolve(run.Inputs{
		Flags: flagSettings(c), Continue: c.Bool("continue"), Resume: c.String("resume"),
		Getenv: stdio.Getenv, Config: stdio.config, Wd: stdio.Wd,
	})
}

// useConfigFile reads the config file before the flags are parsed (the
// profile is a flag) and chooses the colours of stderr, which even an
// error in the flags is shown in.
func useConfigFile(args []string, stdio *IO) {
	profile, _ := scanFlag(args, "profile")
	stdio.config = run.LoadConfig(stdio.Getenv, profile)
	stdio.helpDefaults = nil
	stdio.color = colorSetting(args, stdio.Getenv, stdio.config.Resolved)
	stdio.paint = term.ChooseColor(stdio.color.mode, stdio.Getenv, stdio.ErrTTY)
}

// colorSetting applies flag > NO_COLOR > config > default to --color.
func colorSetting(args []string, getenv func(string) string, r *config.Resolved) colorChoice {
	if v, ok := scanFlag(args, "color"); ok {
		return colorChoice{mode: v, source: "flag --color"}
	}
	if getenv("NO_COLOR") != "" {
		return colorChoice{mode: term.ColorNever, source: "env NO_COLOR"}
	}
	if r != nil && r.IsSet("color") {
		return colorChoice{mode: r.Color, source: "config " + r.Source("color")}
	}
	return colorChoice{mode: term.ColorAuto, source: "default"}
}

// scanFlag finds a flag's value in the raw arguments, before urfave/cli
// parses them: the profile decides the config file's settings, and the
// colour must be known even for an error in the flags. The last one wins,
// as in parsing; "--" ends the flags.
func scanFlag(args []string, name string) (value string, found bool) {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		n, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case n != name:
		case hasValue:
			value, found = v, true
		case i+1 < len(args):
			value, found = args[i+1], true
			i++
		}
	}
	return value, found
}
