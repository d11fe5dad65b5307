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
// splits (-qy), becomes a long word for each flag (--quiet --yes). Each
// command on the command line is written with its own flags: the main
// command's up to its subcommand, then the subcommand's (built in full for
// it).
//
// A flag typed before a subcommand that has a flag of that name too is
// given to the subcommand: urfave/cli would parse it as the main command's,
// and the subcommand would read its own, unset. `ask -p anthropic provider
// request hi` built a request for the default provider.

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
	if _, i := f.leadingFlags(args); i < len(args) && args[i] != "--" {
		return i
	}
	return -1
}

// mainArgs reads args, the main command's words after the program's name,
// as urfave/cli reads them once reordered: its flags, written long with
// their values, and the prompt's words. Before the prompt every dash word is
// a flag (urfave/cli reports unknown ones); after it, only the flags ask
// knows are, so that "ask what is -5 squared" keeps its words, and so does a
// run of letters ("explain grep -qv"). The words after "--" are the
// prompt's, and forced says one was typed; valueless says the last word is
// a flag without its value, where the reading stops.
func (f flagForms) mainArgs(args []string) (flags, words []string, forced, valueless bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(words, args[i+1:]...), true, false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if len(a) < 2 || a[0] != '-' || (!f.known(name) && len(words) > 0) {
			words = append(words, a)
			continue
		}
		long, valueNext := f.long(a)
		flags = append(flags, long...)
		if valueNext {
			if i+1 == len(args) {
				return flags, words, false, true
			}
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, words, false, false
}

// flagWords is one flag of a command line, written long, with its value
// when it takes the next word: ["--attach", "x.png"]. A word no flag of the
// command has is one with no name.
type flagWords struct {
	name  string
	words []string
}

// leadingFlags reads the flags at the start of args, written long, and
// returns them and the index of the word they stop at: the first positional
// word, or "--".
func (f flagForms) leadingFlags(args []string) ([]flagWords, int) {
	var out []flagWords
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			break
		}
		words, valueNext := f.long(a)
		for _, w := range words {
			name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if !f.known(name) {
				name = ""
			}
			out = append(out, flagWords{name: name, words: []string{w}})
		}
		if valueNext && i+1 < len(args) {
			i++
			last := &out[len(out)-1]
			last.words = append(last.words, args[i])
		}
	}
	return out, i
}

// commandLevel is one command of a command line that names a subcommand:
// the name typed for it ("" for the main command), its flags' forms and the
// flags given to it.
type commandLevel struct {
	name  string
	forms flagForms
	flags []flagWords
}

// subcommandLine writes args, a command line whose word at index first
// names the subcommand cmd, with each command's flags long in its own
// forms (mainForms the main command's), and gives a flag typed before a subcommand to the last command on
// the path that has a flag of its name and kind. The flags a command is
// given come before its own, so that a flag typed later still wins.
func subcommandLine(mainForms flagForms, cmd *cli.Command, args []string, first int) []string {
	mainFlags, _ := mainForms.leadingFlags(args[:first])
	levels := []commandLevel{{forms: mainForms, flags: mainFlags}}
	name, rest := args[first], args[first+1:]
	for {
		forms := formsOf(cmd.Flags)
		flags, i := forms.leadingFlags(rest)
		levels = append(levels, commandLevel{name: name, forms: forms, flags: flags})
		rest = rest[i:]
		var sub *cli.Command
		if len(rest) > 0 {
			sub = subcommandNamed(cmd, rest[0])
		}
		if sub == nil {
			break
		}
		cmd, name, rest = sub, rest[0], rest[1:]
	}
	given := make([][]flagWords, len(levels))
	for i, l := range levels {
		for _, f := range l.flags {
			to := i
			for j := len(levels) - 1; j > i && f.name != ""; j-- {
				if levels[j].forms.known(f.name) && levels[j].forms.takesValue[f.name] == l.forms.takesValue[f.name] {
					to = j
					break
				}
			}
			given[to] = append(given[to], f)
		}
	}
	var out []string
	for i, l := range levels {
		if l.name != "" {
			out = append(out, l.name)
		}
		for _, f := range given[i] {
			out = append(out, f.words...)
		}
	}
	return append(out, rest...)
}

func subcommandNamed(c *cli.Command, name string) *cli.Command {
	for _, sub := range c.Subcommands {
		if slices.Contains(sub.Names(), name) {
			return sub
		}
	}
	return nil
}
