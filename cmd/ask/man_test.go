package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers/catalog"
)

// manText is man/ask.1 with roff's font changes and escaped hyphens
// undone, so that "\fB\-\-json\fR" reads "--json".
func manText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../man/ask.1")
	if err != nil {
		t.Fatal(err)
	}
	s := regexp.MustCompile(`\\f[BIRP]|\\f\(..|\\&`).ReplaceAllString(string(b), "")
	return strings.NewReplacer(`\-`, "-", `\(em`, "—", `\(aq`, "'", `\e`, `\`).Replace(s)
}

// mentions reports whether the page holds word as a word of its own (not
// part of a longer flag or name).
func mentions(page, word string) bool {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_-])` + regexp.QuoteMeta(word) + `($|[^A-Za-z0-9_-])`)
	return re.MatchString(page)
}

// TestManPageDocumentsEveryCommandAndFlag walks the app's commands and
// flags and fails naming each one man/ask.1 does not document.
func TestManPageDocumentsEveryCommandAndFlag(t *testing.T) {
	page := manText(t)
	app := newApp(&IO{Getenv: func(string) string { return "" }})
	var walk func(path string, flags []cli.Flag, cmds []*cli.Command)
	walk = func(path string, flags []cli.Flag, cmds []*cli.Command) {
		for _, f := range flags {
			for _, name := range f.Names() {
				flag := "--" + name
				if len(name) == 1 {
					flag = "-" + name
				}
				if !mentions(page, flag) {
					t.Errorf("man/ask.1 does not document %s (a flag of %s)", flag, path)
				}
			}
		}
		for _, c := range cmds {
			if c.Hidden || c.Name == "help" {
				continue
			}
			full := path + " " + c.Name
			if !mentions(page, full) {
				t.Errorf("man/ask.1 does not document the command %q", full)
			}
			walk(full, c.Flags, c.Subcommands)
		}
	}
	walk("ask", app.Flags, app.Commands)
}

// TestManPageSections checks the page's skeleton: the sections a man page
// needs, every exit code of DESIGN §7 and the documented pipeline.
func TestManPageSections(t *testing.T) {
	page := manText(t)
	for _, section := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "SEE ALSO"} {
		if !regexp.MustCompile(`(?m)^\.SH "?` + section + `"?$`).MatchString(page) {
			t.Errorf("no %s section", section)
		}
	}
	for _, code := range []string{"0", "1", "2", "3", "4", "5", "6", "124", "130"} {
		if !regexp.MustCompile(`(?m)^\.IP ` + code + `$|^` + code + `$`).MatchString(page) {
			t.Errorf("exit status %s is not documented", code)
		}
	}
	vars := []string{"ASK_PROVIDER", "ASK_MODEL", "ASK_BASE_URL", "ASK_CONFIG", "ASK_COMMAND", "NO_COLOR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "HOME"}
	for _, p := range catalog.All() {
		vars = append(append(vars, p.KeyEnv...), p.BaseURLEnv...)
	}
	for _, v := range vars {
		if !mentions(page, v) {
			t.Errorf("environment variable %s is not documented", v)
		}
	}
	pipeline := "ask provider request -p openai 'what is in notes.txt?' | ask provider send -p openai | ask provider parse-tool-calls -p openai | ask tools run | ask provider format-tool-result -p openai"
	if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(page, "\\\n", " ")), " "), pipeline) {
		t.Errorf("the pipeline is not in EXAMPLES:\n%s", pipeline)
	}
}
