package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// Settings come from, in order of precedence: a flag, the environment, the
// config file (its profile over its top level), the built-in default.
//
// The file is read before the flags are parsed, and its values become the
// defaults of the flags they correspond to: every c.String("mode") then
// sees flag > config > default without knowing about the file, and
// c.IsSet still means "the user typed it" (--continue relies on that).
// Settings with environment variables in between (provider, model, base
// URL, key) cannot be flag defaults, as the file would then beat the
// environment; buildSession asks runConfig for those.

// settingsFlags are the main command's flags about settings themselves.
func settingsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "profile", Usage: "use profile `NAME` of the config file over its top-level settings (default: $ASK_PROFILE)"},
		&cli.StringFlag{Name: "color", Value: colorAuto, Usage: "colour on stderr: auto (on a terminal, unless NO_COLOR is set), always or never"},
	}
}

// configFlags pairs flags with the config keys that give their defaults.
var configFlags = []struct {
	flag, key string
	value     func(r *config.Resolved, home string) any
}{
	{"mode", "mode", func(r *config.Resolved, _ string) any { return r.Mode }},
	{"safe", "safe", func(r *config.Resolved, _ string) any { return r.Safe }},
	{"max-steps", "max_steps", func(r *config.Resolved, _ string) any { return r.MaxSteps }},
	{"timeout", "timeout", func(r *config.Resolved, _ string) any { d, _ := time.ParseDuration(r.Timeout); return d }},
	{"tool-protocol", "tool_protocol", func(r *config.Resolved, _ string) any { return r.ToolProtocol }},
	{"no-stream", "no_stream", func(r *config.Resolved, _ string) any { return r.NoStream }},
	{"retries", "retries", func(r *config.Resolved, _ string) any { return r.Retries }},
	{"max-tokens", "max_tokens", func(r *config.Resolved, _ string) any { return r.MaxTokens }},
	{"allow-tool", "tools.allow", func(r *config.Resolved, _ string) any { return r.Tools.Allow }},
	{"deny-tool", "tools.deny", func(r *config.Resolved, _ string) any { return r.Tools.Deny }},
	{"yes", "tools.yes", func(r *config.Resolved, _ string) any { return r.Tools.Yes }},
	{"tools-file", "tools.file", func(r *config.Resolved, home string) any { return r.Path(r.Tools.File, home) }},
	{"mcp", "mcp", func(r *config.Resolved, _ string) any { return r.MCP }},
}

// configMetadata is the key of the configState in the app's Metadata.
const configMetadata = "ask.config"

// configState is the config file as it applies to this invocation.
type configState struct {
	path     string
	file     *config.File
	resolved *config.Resolved // nil when err is set
	// err is a broken file or an unknown profile. It is reported by the
	// commands that need settings, so that --help, completion and replay
	// still work.
	err            error
	profile        string
	profileSource  string
	color          colorChoice
	home           string
	appliedToFlags map[string]string // flag name → config key that gave its default
}

// useConfigFile reads the config file before the flags are parsed, makes
// its values the flags' defaults and chooses the colours of stderr. It is
// called once per run, by run.
func useConfigFile(app *cli.App, args []string, stdio *IO) {
	st := loadConfig(args, stdio.Getenv)
	if app.Metadata == nil {
		app.Metadata = map[string]any{}
	}
	app.Metadata[configMetadata] = st
	if st.err == nil {
		st.err = st.applyToFlags(app)
	}
	stdio.paint = chooseColor(st.color, stdio.Getenv, stdio.ErrTTY)
}

func loadConfig(args []string, getenv func(string) string) *configState {
	st := &configState{path: config.Path(getenv), home: getenv("HOME"), appliedToFlags: map[string]string{}}
	if v, ok := scanFlag(args, "profile"); ok {
		st.profile, st.profileSource = v, "flag --profile"
	} else if v := getenv("ASK_PROFILE"); v != "" {
		st.profile, st.profileSource = v, "env ASK_PROFILE"
	}
	st.file, st.err = config.Load(st.path, getenv("ASK_CONFIG") != "", catalog.Names())
	if st.err == nil {
		st.resolved, st.err = st.file.Resolve(st.profile)
	}
	st.color = colorSetting(args, getenv, st.resolved)
	return st
}

// colorSetting applies flag > NO_COLOR > config > default to --color.
func colorSetting(args []string, getenv func(string) string, r *config.Resolved) colorChoice {
	if v, ok := scanFlag(args, "color"); ok {
		return colorChoice{mode: v, source: "flag --color"}
	}
	if getenv("NO_COLOR") != "" {
		return colorChoice{mode: colorNever, source: "env NO_COLOR"}
	}
	if r != nil && r.IsSet("color") {
		return colorChoice{mode: r.Color, source: "config " + r.Source("color")}
	}
	return colorChoice{mode: colorAuto, source: "default"}
}

// applyToFlags makes the file's values the defaults of their flags: the
// main command's, and those of subcommands that share them (`ask tools`,
// `ask provider request` build the same session). A key whose flag the
// main command lacks is an error rather than silently ignored.
func (st *configState) applyToFlags(app *cli.App) error {
	for _, cf := range configFlags {
		if !st.resolved.IsSet(cf.key) {
			continue
		}
		value := cf.value(st.resolved, st.home)
		f := findFlag(app.Flags, cf.flag)
		if f == nil || !setFlagDefault(f, value) {
			return st.resolved.Errorf(cf.key, "this build of ask has no --%s to apply it to", cf.flag)
		}
		st.appliedToFlags[cf.flag] = cf.key
		applyToCommands(app.Commands, cf.flag, value)
	}
	return nil
}

func applyToCommands(cmds []*cli.Command, flag string, value any) {
	for _, c := range cmds {
		if f := findFlag(c.Flags, flag); f != nil {
			setFlagDefault(f, value)
		}
		applyToCommands(c.Subcommands, flag, value)
	}
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// setFlagDefault sets a flag's default before parsing; it reports false
// when the value does not fit the flag's type.
func setFlagDefault(f cli.Flag, v any) bool {
	ok := false
	switch f := f.(type) {
	case *cli.StringFlag:
		var s string
		if s, ok = v.(string); ok {
			f.Value = s
		}
	case *cli.BoolFlag:
		var b bool
		if b, ok = v.(bool); ok {
			f.Value = b
		}
	case *cli.IntFlag:
		var n int
		if n, ok = v.(int); ok {
			f.Value = n
		}
	case *cli.DurationFlag:
		var d time.Duration
		if d, ok = v.(time.Duration); ok {
			f.Value = d
		}
	case *cli.StringSliceFlag:
		var list []string
		if list, ok = v.([]string); ok {
			f.Value = cli.NewStringSlice(list...)
		}
	}
	return ok
}

// scanFlag finds a flag's value in the raw arguments, before urfave/cli
// parses them: the profile decides the flags' defaults, and the colour
// must be known even for an error in the flags. The last one wins, as in
// parsing; "--" ends the flags.
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

// configOf returns the config state of the running app.
func configOf(c *cli.Context) *configState {
	if c != nil && c.App != nil {
		if st, ok := c.App.Metadata[configMetadata].(*configState); ok {
			return st
		}
	}
	empty, _ := (&config.File{}).Resolve("")
	return &configState{resolved: empty, color: colorChoice{mode: colorAuto, source: "default"}, appliedToFlags: map[string]string{}}
}

// runConfig is what a session takes from the config file beyond the flags'
// defaults: the provider and its settings, the model, the key.
type runConfig struct {
	st    *configState
	r     *config.Resolved
	c     *cli.Context
	stdio *IO
}

// sessionConfig checks the settings a run needs and returns the file's
// part in them; a broken file or an unknown profile is a usage error.
func sessionConfig(c *cli.Context, stdio *IO) (*runConfig, error) {
	st := configOf(c)
	if st.err != nil {
		return nil, withCode(exitUsage, st.err)
	}
	if m := c.String("color"); !oneOf(m, config.Colors) {
		return nil, usageErr("--color %q: choose auto, always or never", m)
	}
	// Patterns from the file are checked here so that a bad one is
	// reported where it was written, not as a flag's.
	for _, p := range []struct{ flag, key string }{{"allow-tool", "tools.allow"}, {"deny-tool", "tools.deny"}} {
		if st.appliedToFlags[p.flag] == "" || c.IsSet(p.flag) {
			continue
		}
		if _, err := policy.ParsePatterns(c.StringSlice(p.flag)); err != nil {
			return nil, withCode(exitUsage, st.resolved.Errorf(p.key, "%v", err))
		}
	}
	return &runConfig{st: st, r: st.resolved, c: c, stdio: stdio}, nil
}

// providerName is the file's default provider, "" when it names none.
func (rc *runConfig) providerName() string { return rc.r.Provider }

// configure applies the file's settings for a provider: its base URL
// becomes the default that --base-url and the variables override, and its
// key_env replaces the usual key variable.
func (rc *runConfig) configure(p catalog.Provider) catalog.Provider {
	ps := rc.r.Providers[p.Name]
	if ps.BaseURL != "" {
		p.BaseURL = ps.BaseURL
	}
	if ps.KeyEnv != "" {
		p.KeyEnv = []string{ps.KeyEnv}
	}
	return p
}

// model is the file's model for the provider, "" for none.
func (rc *runConfig) model(provider string) string {
	m, _ := rc.r.ModelFor(provider)
	return m
}

// key is the provider's key: its variable first, then the file's api_key.
func (rc *runConfig) key(p catalog.Provider) (string, error) {
	k, err := p.Key(rc.stdio.Getenv)
	if k != "" {
		return k, nil
	}
	fileKey := strings.TrimSpace(rc.r.Providers[p.Name].APIKey.Reveal())
	if fileKey == "" {
		return k, err
	}
	rc.warnIfReadable()
	return fileKey, nil
}

// warnIfReadable warns, as ssh does, when a file holding a key can be read
// by others.
func (rc *runConfig) warnIfReadable() {
	info, err := os.Stat(rc.st.path)
	if err != nil || info.Mode().Perm()&0o077 == 0 || rc.c.Bool("quiet") {
		return
	}
	fmt.Fprintf(rc.stdio.Err, "ask: warning: %s holds an API key and others can read it: chmod 600 %s\n", rc.st.path, rc.st.path)
}

func oneOf(s string, list []string) bool {
	for _, v := range list {
		if s == v {
			return true
		}
	}
	return false
}
