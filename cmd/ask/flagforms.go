package main

import (
	"cmp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// urfave/cli refuses a command line that gives one flag in two forms
// ("Cannot use two forms of the same flag"), so `ask -q --quiet`, a script
// that adds --yes to flags holding -y, or `-a x.png --attach y.pdf` would
// fail. A run writes every flag word long before urfave/cli reads it: -q
// becomes --quiet, and a run of one-letter switches, which urfave/cli
// splits (-qy), becomes one long word a flag (--quiet --yes). Each command
// on the command line is written with its own flags: the main command's up
// to its subcommand, then the subcommand's (built in full for it).

// flagForms knows a command's flags by every one of their names.
type flagForms struct {
	takesValue map[string]bool   // each name: whether the flag takes a value
	longName   map[string]string // each alias: the flag's name
}

func formsOf(flags []cli.Flag) flagForms {
	f := flagForms{takesValue: valueFlags(flags), longName: map[string]string{}}
	for _, fl := range flags {
		if name, aliases, ok := nameAndAliases(declared(fl)); ok {
			for _, a := range aliases {
				f.longName[a] = name
			}
		}
	}
	return f
}

// known reports whether name is one of the flags' names.
func (f flagForms) known(name string) bool {
	_, ok := f.takesValue[name]
	return ok
}

// long returns the flag word a written long, as words, and whether the
// word after it is the value of its last flag. A word it does not know
// stays as it is, for urfave/cli to report.
func (f flagForms) long(a string) (words []string, valueNext bool) {
	dashes := len(a) - len(strings.TrimLeft(a, "-"))
	name, _, hasValue := strings.Cut(a[dashes:], "=")
	if f.known(name) {
		if long, ok := f.longName[name]; ok {
			a = "--" + long + a[dashes+len(name):] // and "=value", if given so
		}
		return []string{a}, f.takesValue[name] && !hasValue
	}
	if switches, ok := f.switchRun(a); ok {
		last := switches[len(switches)-1]
		for i, s := range switches {
			switches[i] = "--" + cmp.Or(f.longName[s], s)
		}
		return switches, f.takesValue[last]
	}
	return []string{a}, false
}

// switchRun splits -qy into its one-letter flags, as urfave/cli does: every
// letter a flag's name, and only the last taking a value.
func (f flagForms) switchRun(a string) ([]string, bool) {
	letters := strings.TrimPrefix(a, "-")
	if len(a) < 3 || a[1] == '-' || strings.Contains(letters, "=") {
		return nil, false
	}
	var out []string
	for i, r := range letters {
		name := string(r)
		if !f.known(name) || (f.takesValue[name] && i != len(letters)-1) {
			return nil, false
		}
		out = append(out, name)
	}
	return out, true
}

// firstPositional returns the index in args of the first word that is not
// a flag or a flag's value, as urfave/cli reads them, or -1 when there is
// none or "--" comes first.
func (f flagForms) firstPositional(args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return -1
		}
		if len(a) < 2 || a[0] != '-' {
			return i
		}
		if _, valueNext := f.long(a); valueNext {
			i++
		}
	}
	return -1
}

// leadingFlags writes long the flag words at the start of args, with their
// values, and returns them and the index of the word they stop at: the
// first positional word, or "--".
func (f flagForms) leadingFlags(args []string) ([]string, int) {
	out := make([]string, 0, len(args))
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			break
		}
		words, valueNext := f.long(a)
		out = append(out, words...)
		if valueNext && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out, i
}

// subcommandArgs writes long the flags of command c in args, its command
// line after its name, and those of the subcommand args name, and so on
// down: each command's flag words come before its first positional word,
// where urfave/cli stops reading them.
func subcommandArgs(c *cli.Command, args []string) []string {
	out, i := formsOf(c.Flags).leadingFlags(args)
	if i < len(args) {
		if sub := subcommandNamed(c, args[i]); sub != nil {
			return append(append(out, args[i]), subcommandArgs(sub, args[i+1:])...)
		}
	}
	return append(out, args[i:]...)
}

func subcommandNamed(c *cli.Command, name string) *cli.Command {
	for _, sub := range c.Subcommands {
		if slices.Contains(sub.Names(), name) {
			return sub
		}
	}
	return nil
}
