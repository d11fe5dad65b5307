package main

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestStoredNames checks that a flag with stored names is the flag it
// wraps to urfave/cli: the same names and the same interfaces; and that
// the app a run builds, outlines and stored names, gives the same help as
// the whole tree for every command.
func TestStoredNames(t *testing.T) {
	t.Parallel()
	ifaces := []reflect.Type{
		reflect.TypeFor[cli.DocGenerationFlag](), reflect.TypeFor[cli.DocGenerationSliceFlag](),
		reflect.TypeFor[cli.VisibleFlag](), reflect.TypeFor[cli.CategorizableFlag](),
		reflect.TypeFor[cli.RequiredFlag](), reflect.TypeFor[cli.ActionableFlag](), reflect.TypeFor[cli.Countable](),
	}
	name := func(path []string) string { return strings.Join(append([]string{"ask"}, path...), " ") }
	stdio := func() *IO { return &IO{Getenv: func(string) string { return "" }} }
	declared, stored := newApp(stdio()), newApp(stdio())
	storeAllNames(stored)
	var paths [][]string
	var walk func(path []string, a, b []cli.Flag, ac, bc []*cli.Command)
	walk = func(path []string, a, b []cli.Flag, ac, bc []*cli.Command) {
		paths = append(paths, path)
		wrapped := 0
		for i := range a {
			if reflect.TypeOf(a[i]) != reflect.TypeOf(b[i]) {
				wrapped++
			}
			if got, want := b[i].Names(), a[i].Names(); !slices.Equal(got, want) {
				t.Errorf("%s: stored names %q, want %q", name(path), got, want)
			}
			for _, it := range ifaces {
				if reflect.TypeOf(a[i]).Implements(it) != reflect.TypeOf(b[i]).Implements(it) {
					t.Errorf("%s --%s: %T and %T differ on %v", name(path), a[i].Names()[0], a[i], b[i], it)
				}
			}
		}
		if len(a) > 0 && wrapped == 0 {
			t.Errorf("%s: no flag was given stored names", name(path))
		}
		for i := range ac {
			walk(append(slices.Clone(path), ac[i].Name), ac[i].Flags, bc[i].Flags, ac[i].Subcommands, bc[i].Subcommands)
		}
	}
	walk(nil, declared.Flags, stored.Flags, declared.Commands, stored.Commands)
	if len(paths) < 5 {
		t.Fatalf("walked %d commands", len(paths))
	}
	help := func(app *cli.App, path []string) string {
		var out bytes.Buffer
		app.Writer, app.ErrWriter = &out, &out
		if err := app.Run(append(append([]string{"ask"}, path...), "--help")); err != nil {
			t.Errorf("%s --help: %v", name(path), err)
		}
		return out.String()
	}
	for _, path := range paths {
		plain := newApp(stdio())
		// The app a run builds (newRunApp, useStoredNames).
		wrapped, _ := newRunApp(stdio())
		useStoredNames(wrapped)
		if got, want := help(wrapped, path), help(plain, path); got != want {
			t.Errorf("%s --help in the app of a run:\n%s\nwant:\n%s", name(path), got, want)
		}
	}
}

// storeAllNames gives stored names to every flag of the app, as a run does
// to the commands it parses.
func storeAllNames(app *cli.App) {
	app.Flags = storedNames(app.Flags)
	for _, c := range app.Commands {
		storeCommandNames(c)
	}
}

// TestStoredNamesOfTheCommandRun checks that a run gives stored names to
// the flags of the subcommand it runs, and only to those.
func TestStoredNamesOfTheCommandRun(t *testing.T) {
	t.Parallel()
	app := newApp(&IO{Getenv: func(string) string { return "" }})
	var ran *cli.Command
	for _, c := range app.Commands {
		if len(c.Subcommands) > 0 && len(c.Subcommands[0].Flags) > 0 {
			ran = c
			break
		}
	}
	if ran == nil {
		t.Fatal("no command with subcommands that take flags")
	}
	sub := ran.Subcommands[0]
	sub.Action = func(*cli.Context) error { return nil }
	useStoredNames(app)
	app.Writer, app.ErrWriter = &bytes.Buffer{}, &bytes.Buffer{}
	if err := app.Run([]string{"ask", ran.Name, sub.Name}); err != nil {
		t.Fatalf("ask %s %s: %v", ran.Name, sub.Name, err)
	}
	isStored := func(f cli.Flag) bool { return reflect.TypeOf(f).Elem().PkgPath() == "github.com/ask-cli/ask/cmd/ask" }
	for _, c := range app.Commands {
		for _, f := range c.Flags {
			if isStored(f) != (c == ran) {
				t.Errorf("ask %s --%s: stored names %v after running ask %s %s", c.Name, f.Names()[0], isStored(f), ran.Name, sub.Name)
			}
		}
	}
	if !slices.ContainsFunc(sub.Flags, isStored) || !slices.ContainsFunc(app.Flags, isStored) {
		t.Errorf("ask %s %s ran without stored names", ran.Name, sub.Name)
	}
}
