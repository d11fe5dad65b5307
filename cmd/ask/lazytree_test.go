package main

import (
	"bytes"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestOutlines checks that a run's app holds each subcommand in outline,
// with the names and usage of the full command and fewer flags, and that
// the command a run chooses is the full one.
func TestOutlines(t *testing.T) {
	t.Parallel()
	stdio := func() *IO {
		return &IO{Getenv: func(string) string { return "" }, Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	}
	full := newApp(stdio())
	outlined, _ := newRunApp(stdio())
	if len(full.Commands) != len(outlined.Commands) {
		t.Fatalf("%d commands in outline, %d in full", len(outlined.Commands), len(full.Commands))
	}
	countFlags := func(c *cli.Command) int {
		n := 0
		var walk func(*cli.Command)
		walk = func(c *cli.Command) {
			n += len(c.Flags)
			for _, sub := range c.Subcommands {
				walk(sub)
			}
		}
		walk(c)
		return n
	}
	var lighter *cli.Command
	for i, f := range full.Commands {
		o := outlined.Commands[i]
		if o.Name != f.Name || !slices.Equal(o.Aliases, f.Aliases) || o.Usage != f.Usage || o.Hidden != f.Hidden || o.Category != f.Category {
			t.Errorf("outline of ask %s: %q %q %q hidden %v %q; full: %q %q %q hidden %v %q", f.Name,
				o.Name, o.Aliases, o.Usage, o.Hidden, o.Category, f.Name, f.Aliases, f.Usage, f.Hidden, f.Category)
		}
		if countFlags(o) < countFlags(f) && lighter == nil {
			lighter = f
		}
	}
	if lighter == nil {
		t.Fatal("no outline is lighter than its command: the tree is built in full")
	}
	// Run the lighter command's first subcommand (or itself) with --help:
	// the command that runs is the full one.
	path := []string{"ask", lighter.Name}
	if len(lighter.Subcommands) > 0 {
		path = append(path, lighter.Subcommands[0].Name)
	}
	app, _ := newRunApp(stdio())
	if err := app.Run(append(path, "--help")); err != nil {
		t.Fatalf("%v --help: %v", path, err)
	}
	// urfave/cli adds --help to the commands it runs.
	if ran := app.Command(lighter.Name); countFlags(ran) < countFlags(lighter) {
		t.Errorf("ask %s after it ran: %d flags, the full command has %d", lighter.Name, countFlags(ran), countFlags(lighter))
	}
}
