package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/table"
)

func configCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "config",
		Usage:     "print the settings in effect and where each came from",
		UsageText: "ask [flags] config [--json] [--profile NAME]",
		Description: `Each setting comes from a flag, else the environment, else the config file
(the profile's keys over the top level's), else the default. Flags given
before "config" count, so "ask -m gpt-4.1 config" shows what "ask -m gpt-4.1"
would use. Keys are shown only as set or unset.

The config file is $ASK_CONFIG, else $XDG_CONFIG_HOME/ask/config.json, else
~/.config/ask/config.json. A missing file is not an error; a broken one is,
and this command is a quick way to check one. It is JSON with these keys:

` + settings.ConfigKeys() + `
  providers: {NAME: {base_url, key_env (a variable's name), api_key, model}}
  aliases: {SHORT: MODEL}, so that --model SHORT means MODEL
  profiles: {NAME: {any of the keys above}}, chosen by --profile or $ASK_PROFILE
  mcpServers: {NAME: {command, args, env} or {url, headers, oauth}, with type,
    disabled, sandbox}: the shape of Claude Desktop's and Cursor's files, top
    level only; "ask mcp list" shows them. oauth: {client_id, client_secret,
    scopes, client_metadata_url, grant_type (authorization_code or
    client_credentials), private_key_file (a PEM key's path, chmod 600: signs
    a JWT instead of a client_secret), signing_algorithm (ES256 or RS256),
    idp_issuer, idp_client_id, idp_client_secret (sign in through an
    enterprise identity provider: see ask mcp login --help)}

A profile's list replaces the top level's, but deny rules (tools.deny, a
profile's, --deny-tool) add up; --yes=false and --safe=false undo
a true from the file. An api_key is used only when its variable is unset, and
the file should then be readable by you alone (chmod 600).

On a terminal the settings are a table; in a pipe, or with --json, one JSON
object: {"config_file", "config_found", "settings": {NAME: {"value", "source"}}}.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON even on a terminal"},
			&cli.BoolFlag{Name: "profiles", Usage: "print the names of the config file's profiles, one a line (what shell completion offers for --profile)"},
		},
		Action: func(c *cli.Context) error { return configAction(c, stdio) },
	}
}

func configAction(c *cli.Context, stdio *IO) error {
	if c.NArg() > 0 {
		return usageErr("config takes no arguments, got %q", c.Args().First())
	}
	if c.Bool("profiles") {
		// Listed even when the profile chosen is unknown: that is when a
		// user needs the names.
		if f := stdio.config.File; f != nil {
			for _, name := range f.ProfileNames() {
				fmt.Fprintln(stdio.Out, name)
			}
		}
		return nil
	}
	s, err := resolve(c, stdio)
	if err != nil {
		return err
	}
	entries := append(s.Entries(), run.Entry{Name: "color", Value: stdio.color.mode, Source: stdio.color.source})
	cfg := stdio.config
	if c.Bool("json") || !stdio.OutTTY {
		var file any
		if cfg.Path != "" {
			file = cfg.Path
		}
		return writeJSON(stdio.Out, configJSON{File: file, Found: cfg.Found(), Settings: entries}, stdio.OutTTY)
	}
	return table.Settings(stdio.Out, cfg.Shown(), entries)
}

// configJSON is what `ask config` prints in a pipe.
type configJSON struct {
	File     any              `json:"config_file"`
	Found    bool             `json:"config_found"`
	Settings settings.Entries `json:"settings"`
}
