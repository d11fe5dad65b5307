package main

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/settings"
)

// runFlags are the main command's flags, one for each row of package
// settings. Subcommands that build a run declare none of them: they read
// them through urfave/cli's context lineage, and the argv pass gives every
// such flag to the main command wherever it was typed. The defaults they
// show in --help are the settings that apply when the flag is not typed
// (the environment, the config file, the built-in defaults); which value
// a run uses is decided by run.Resolve, never by these.
func runFlags(stdio *IO) []cli.Flag {
	// The defaults help shows are the settings in effect; a run resolves
	// its own (run.Resolve), and pays for no second resolution.
	var d run.Settings
	if stdio.forHelp {
		d = helpDefaults(stdio)
	}
	out := make([]cli.Flag, 0, len(settings.Rows()))
	for _, r := range settings.Rows() {
		if r.ConfigOnly {
			continue
		}
		// A run declares to urfave/cli only the flags its line gives: the
		// argv pass has read the line, and a flag not typed has nothing
		// to parse (run.Resolve gives its setting from the other layers).
		if !stdio.forHelp && stdio.typed != nil && !stdio.typed[r.Name] {
			continue
		}
		f := cliFlag(r, d)
		// urfave/cli groups the flags by category at every start, which a
		// run that shows no help need not pay for.
		if !stdio.forHelp {
			f.category = ""
		}
		out = append(out, f)
	}
	return out
}

// cliFlag is the row r as urfave/cli declares it, showing the default d
// holds for it, with its names stored (namedFlag).
func cliFlag(r settings.Row, d run.Settings) *namedFlag {
	names := []string{r.Name}
	if r.Short != "" {
		names = append(names, r.Short)
	}
	return &namedFlag{Flag: declareFlag(r, d), names: names, category: r.Category}
}

// namedFlag is a flag whose Names returns the names worked out once.
// urfave/cli's own runs a regular expression over each name on every call,
// and parsing a command line calls it about n² times for n flags (for each
// flag, IsSet asks every flag its names): for the main command's flags
// that was most of the allocations of a one-shot run. The flag embeds the
// declared one, so its value, help and every interface urfave/cli asks of
// it are that flag's own; it is a pointer, since urfave/cli compares flags.
type namedFlag struct {
	cli.Flag
	names    []string
	category string
}

func (f *namedFlag) Names() []string { return f.names }

// The interfaces urfave/cli's help and parsing ask of a flag, which an
// embedded interface does not promote.
func (f *namedFlag) GetUsage() string             { return f.Flag.(cli.DocGenerationFlag).GetUsage() }
func (f *namedFlag) GetValue() string             { return f.Flag.(cli.DocGenerationFlag).GetValue() }
func (f *namedFlag) GetDefaultText() string       { return f.Flag.(cli.DocGenerationFlag).GetDefaultText() }
func (f *namedFlag) GetEnvVars() []string         { return nil }
func (f *namedFlag) TakesValue() bool             { return f.Flag.(cli.DocGenerationFlag).TakesValue() }
func (f *namedFlag) IsVisible() bool              { return true }
func (f *namedFlag) GetCategory() string          { return f.category }
func (f *namedFlag) IsRequired() bool             { return false }
func (f *namedFlag) IsDefaultVisible() bool       { return true }
func (f *namedFlag) RunAction(*cli.Context) error { return nil }

// declareFlag is the flag of the row's kind.
func declareFlag(r settings.Row, d run.Settings) cli.Flag {
	var aliases []string
	if r.Short != "" {
		aliases = []string{r.Short}
	}
	usage := r.Help
	if r.Name == "provider" {
		usage = fmt.Sprintf(usage, strings.Join(catalog.Names(), ", "))
	}
	def := r.Default
	if v, _, given := d.Values.Get(r.Name); given {
		def = v
	}
	switch r.Kind {
	case settings.Bool:
		v, _ := def.(bool)
		return &cli.BoolFlag{Name: r.Name, Aliases: aliases, Usage: usage, Value: v}
	case settings.Int:
		v, _ := def.(int)
		return &cli.IntFlag{Name: r.Name, Aliases: aliases, Usage: usage, Value: v}
	case settings.Float:
		v, given := def.(float64)
		text := "the provider's own"
		if given {
			text = strconv.FormatFloat(v, 'g', -1, 64)
		}
		return &cli.Float64Flag{Name: r.Name, Aliases: aliases, Usage: usage, Value: v, DefaultText: text}
	case settings.Duration:
		v, _ := def.(time.Duration)
		return &cli.DurationFlag{Name: r.Name, Aliases: aliases, Usage: usage, Value: v}
	case settings.List:
		v, _ := def.([]string)
		return &cli.StringSliceFlag{Name: r.Name, Aliases: aliases, Usage: usage, Value: stringSlice(v)}
	}
	v, _ := def.(string)
	f := &cli.StringFlag{Name: r.Name, Aliases: aliases, Usage: usage, Value: v}
	if r.Name == "reasoning" && v == "" {
		f.DefaultText = "the model's own"
	}
	return f
}

// flagSettings is the layer of typed flags: each setting the user gave a
// flag for, by its own name, through its row's Parse, and nothing else. c
// may be a subcommand's context: the lineage finds the main command's
// flags. Which flags were typed is the argv pass's word (stdio.typed):
// urfave/cli's IsSet asks every flag for its names, through a regular
// expression, for each name it is asked about.
func flagSettings(c *cli.Context, stdio *IO) (run.Settings, error) {
	typed := c.IsSet
	if stdio.typed != nil {
		typed = func(name string) bool { return stdio.typed[name] }
	}
	var s run.Settings
	for _, r := range settings.Rows() {
		if !r.IsSetting() || !typed(r.Name) {
			continue
		}
		v, err := r.Parse(flagValue(c, r))
		if err != nil {
			return s, usageErr("--%s %v", r.Name, err)
		}
		s.Values.Set(r.Name, v, "flag --"+r.Name)
	}
	return s, nil
}

func flagValue(c *cli.Context, r settings.Row) any {
	switch r.Kind {
	case settings.Bool:
		return c.Bool(r.Name)
	case settings.Int:
		return c.Int(r.Name)
	case settings.Float:
		return c.Float64(r.Name)
	case settings.Duration:
		return c.Duration(r.Name)
	case settings.List:
		return c.StringSlice(r.Name)
	}
	return c.String(r.Name)
}

// helpDefaults are the settings that apply to a flag not typed, for
// --help to show (run.Defaults), worked out once.
func helpDefaults(stdio *IO) run.Settings {
	if stdio.helpDefaults != nil {
		return *stdio.helpDefaults
	}
	s := run.Defaults(run.Inputs{Getenv: stdio.Getenv, Config: stdio.config, Wd: stdio.Wd})
	stdio.helpDefaults = &s
	return s
}

func stringSlice(l []string) *cli.StringSlice {
	if len(l) == 0 {
		return nil
	}
	return cli.NewStringSlice(l...)
}

// valueHint says what a value of the kind looks like; see for a string.
func valueHint(k settings.Kind, see string) string { return cmp.Or(k.Hint(), see) }

// kindOf is the kind of a flag urfave/cli declares.
func kindOf(f cli.Flag) settings.Kind {
	if n, ok := f.(*namedFlag); ok {
		f = n.Flag
	}
	switch f.(type) {
	case *cli.BoolFlag, *sharedFlag:
		return settings.Bool
	case *cli.IntFlag:
		return settings.Int
	case *cli.Float64Flag:
		return settings.Float
	case *cli.DurationFlag:
		return settings.Duration
	case *cli.StringSliceFlag:
		return settings.List
	}
	return settings.String
}

// mainSpec is the command tree as the argv pass reads it: the main
// command's flags from the rows; a subcommand by its name alone until the
// line names it, then built and read from its declaration.
func mainSpec(stdio *IO) *commandSpec {
	rows := settings.Rows()
	// Sized for each row's name and short name, and help and version:
	// grown a row at a time, it was rehashed several times every start.
	main := &commandSpec{name: "ask", flags: make(map[string]flagSpec, 2*len(rows)+4), prompt: true}
	for i := range rows {
		r := &rows[i] // the shared row: a copy would cost every start an allocation a row
		if r.ConfigOnly {
			continue
		}
		f := flagSpec{name: r.Name, value: r.Kind != settings.Bool, row: r, hint: valueHint(r.Kind, "see ask --help"), bare: r.Bare}
		main.flags[r.Name] = f
		if r.Short != "" {
			main.flags[r.Short] = f
		}
	}
	main.flags["help"] = flagSpec{name: "help", inert: true}
	main.flags["h"] = main.flags["help"]
	main.flags["version"] = flagSpec{name: "version", inert: true}
	for _, c := range commands {
		build := c.build
		main.subs = append(main.subs, &commandSpec{name: c.name, names: []string{c.name},
			load: func() *cli.Command { return buildCommand(stdio, build) }})
	}
	return main
}

// read fills s's flags and subcommands from c, its command under parent.
// Its name is not written: other lines may be matching names meanwhile.
func (s *commandSpec) read(c *cli.Command, parent string) {
	path := parent + " " + c.Name
	s.cmd = c
	s.flags = map[string]flagSpec{}
	help := flagSpec{name: "help"}
	s.flags["help"], s.flags["h"] = help, help
	for _, f := range c.Flags {
		names := f.Names()
		k := kindOf(f)
		spec := flagSpec{name: names[0], value: k != settings.Bool, hint: valueHint(k, "see "+path+" --help")}
		for _, n := range names {
			s.flags[n] = spec
		}
	}
	for _, sub := range c.Subcommands {
		subSpec := &commandSpec{name: sub.Name, names: sub.Names(), hidden: sub.Hidden}
		subSpec.read(sub, path)
		s.subs = append(s.subs, subSpec)
	}
}

// runFlagsRead names, for each subcommand that reads them, the main
// command's flags that mean something to it: its help names them, and
// shell completion offers them after its name. It may be given any other
// (they are the main command's), to no effect.
var runFlagsRead = map[string][]string{
	"ask config":                      {"profile"},
	"ask replay":                      {"yes", "accept-edits", "allow-tool", "deny-tool", "safe", "workdir", "sandbox", "allow-network", "allow-host", "mcp-header", "no-hooks", "json", "events", "transcript", "quiet", "verbose", "profile"},
	"ask models":                      {"provider", "base-url", "retries", "profile"},
	"ask tools list":                  {"mode", "safe", "allow-tool", "deny-tool", "no-tools", "workdir", "tools-file", "mcp", "mcp-header", "profile", "quiet"},
	"ask tools show":                  {"mode", "safe", "allow-tool", "deny-tool", "no-tools", "workdir", "tools-file", "mcp", "mcp-header", "profile", "quiet"},
	"ask tools run":                   {"mode", "safe", "sandbox", "allow-network", "allow-tool", "deny-tool", "yes", "no-tools", "workdir", "tools-file", "mcp", "mcp-header", "timeout", "profile", "quiet"},
	"ask mcp list":                    {"mcp", "mcp-header", "sandbox-mcp", "workdir", "profile", "quiet"},
	"ask provider format-tools":       {"provider", "profile"},
	"ask provider parse-tool-calls":   {"provider", "tool-protocol", "mode", "safe", "allow-tool", "deny-tool", "no-tools", "workdir", "tools-file", "mcp", "mcp-header", "profile", "quiet"},
	"ask provider format-tool-result": {"provider", "tool-protocol", "profile"},
	"ask provider send":               {"provider", "model", "base-url", "no-stream", "retries", "profile", "quiet"},
	"ask provider append":             {"provider", "tool-protocol", "profile"},
	"ask provider request":            {"provider", "model", "mode", "safe", "system", "attach", "schema", "tool-protocol", "max-tokens", "temperature", "reasoning", "allow-tool", "deny-tool", "no-tools", "workdir", "tools-file", "mcp", "continue", "resume", "no-stream", "profile"},
}

// addRunFlagsNotes says in the help of c, a command under parent, and of
// every command under it, which of the main command's flags it reads.
func addRunFlagsNotes(c *cli.Command, parent string) {
	full := parent + " " + c.Name
	if names := runFlagsRead[full]; len(names) > 0 {
		dashed := make([]string, len(names))
		for i, n := range names {
			dashed[i] = "--" + n
		}
		note := "It reads the main command's flags (ask --help), typed before or after its name: " + strings.Join(dashed, ", ") + "."
		c.Description = strings.TrimLeft(strings.TrimRight(c.Description, "\n")+"\n\n"+note, "\n")
	}
	for _, sub := range c.Subcommands {
		addRunFlagsNotes(sub, full)
	}
}
