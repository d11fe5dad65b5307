package main

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/settings"
)

// urfaveFlagString is urfave/cli's own rendering of a flag in help.
var urfaveFlagString = cli.FlagStringer

func init() {
	cli.FlagStringer = flagString
}

// flagString renders a flag for help as urfave/cli does, without the
// defaults that say nothing or say it twice: "(default: false)" on a
// switch, and the generated default of a flag whose usage already says
// what its default is ("(default: the provider's own) (default: 0)").
func flagString(f cli.Flag) string {
	s := urfaveFlagString(f)
	df, ok := f.(cli.DocGenerationFlag)
	if !ok || df.GetDefaultText() == "" {
		return s
	}
	isBool := kindOf(f) == settings.Bool
	if (isBool && df.GetDefaultText() == "false") || strings.Contains(df.GetUsage(), "(default:") {
		s = strings.TrimSuffix(s, " (default: "+df.GetDefaultText()+")")
	}
	return s
}

// examplesText holds the examples shown at the end of each command's
// --help, under the command's full name in brackets: prose, not code.
//
//go:embed examples.txt
var examplesText string

// examples are examplesText's, by the command's full name.
var examples = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	var name string
	for line := range strings.Lines(examplesText) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			name = line[1 : len(line)-1]
		case line != "":
			out[name] = append(out[name], line)
		}
	}
	return out
})

// addCommandExamples appends the examples of c, a command under parent
// ("ask", "ask provider"), and of every command under it.
func addCommandExamples(c *cli.Command, parent string) {
	full := parent + " " + c.Name
	c.Description = withExamples(c.Description, examples()[full])
	for _, sub := range c.Subcommands {
		addCommandExamples(sub, full)
	}
}

func withExamples(description string, lines []string) string {
	if len(lines) == 0 {
		return description
	}
	var b strings.Builder
	if description != "" {
		b.WriteString(strings.TrimRight(description, "\n") + "\n\n")
	}
	b.WriteString("Examples:")
	for _, l := range lines {
		b.WriteString("\n   " + l)
	}
	return b.String()
}
