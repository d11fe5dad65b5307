package main

import (
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/settings"
)

// The argv pass reads the command line once, before urfave/cli, and does
// what urfave/cli v2 lacks: flags after the prompt and after a subcommand's
// arguments, short and long forms of one flag on one line (-q --quiet), and
// runs of switches (-qy). Every flag goes to the deepest command on the
// line that declares it, wherever it was typed, so `ask --safe tools run`
// and `ask tools run --safe` are one command line. What it writes for
// urfave/cli has every flag long, with its value after "=", and the
// positional words after "--". Nothing else reads argv.
//
// After the first word of a prompt, only the flags that shape output or
// limits, or only narrow what the model may do, are flags (DESIGN §1): a
// file name that spells --provider=command, passed by xargs after the
// prompt, must not choose what runs. Any other flag there is an error
// naming "--"; a dash word that is no flag, or a run of letters, is the
// prompt's ("what is -5 squared", "explain grep -qv").

// commandSpec is a command as the argv pass sees it.
type commandSpec struct {
	name  string
	names []string            // its name and aliases
	flags map[string]flagSpec // by every name of every flag
	subs  []*commandSpec      // its subcommands
	// hidden commands are never suggested for a mistyped word.
	hidden bool
	// prompt is set for the main command: its words are a prompt.
	prompt bool
	// cmd is the command declared; load builds it, once, when the line
	// names a command known so far by its name alone.
	cmd    *cli.Command
	load   func() *cli.Command
	loaded sync.Once
}

// flagSpec is one flag of a command.
type flagSpec struct {
	name  string // the long name
	value bool   // takes a value
	// row is the main command's flag's row, whose widening mark says
	// whether it may follow a prompt's first word; nil for other flags.
	row *settings.Row
	// inert flags (--help, --version) may follow the prompt too.
	inert bool
	hint  string // what a value looks like, for a flag missing one
	// bare, when set, is the value of the flag typed without "=VALUE":
	// it never takes the next word (--worktree, --worktree=NAME).
	bare string
}

// commandLine is a command line as the argv pass read it.
type commandLine struct {
	path  []*commandSpec // the main command first, then each subcommand named
	flags [][]string     // for each command of path, its flag words, long
	args  []string       // the positional words of the last command
	// forced is set when "--" came before the first positional word: the
	// words are a prompt, whatever they spell.
	forced bool
}

// flagWord is a flag read from the line: its words written long, and the
// name that decides which command it goes to.
type flagWord struct {
	spec flagSpec
	word string // "--name" or "--name=value"; as typed when unknown
	at   int    // the command it was typed under, an index of path
}

// readArgs reads args (without the program's name) against the command
// tree main.
func readArgs(main *commandSpec, args []string) (line commandLine, err error) {
	line = commandLine{path: []*commandSpec{main}}
	var read []flagWord
	// Even a line with an error keeps what was read before it: the colour
	// of the error is a flag.
	defer func() { line.place(read) }()
	for i := 0; i < len(args); i++ {
		a := args[i]
		cur := line.path[len(line.path)-1]
		if a == "--" {
			line.forced = len(line.args) == 0
			line.args = append(line.args, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if sub := cur.sub(a); sub != nil && len(line.args) == 0 {
				line.path = append(line.path, sub)
				continue
			}
			line.args = append(line.args, a)
			continue
		}
		afterPrompt := cur.prompt && len(line.args) > 0
		words, ok := line.expand(a, !afterPrompt)
		if afterPrompt && !ok {
			line.args = append(line.args, a) // the prompt's own word
			continue
		}
		if !ok {
			// Unknown: urfave/cli says so, with the nearest flag.
			read = append(read, flagWord{word: a, at: len(line.path) - 1})
			continue
		}
		for j, f := range words {
			word := "--" + f.name
			_, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			last := j == len(words)-1
			switch {
			case hasValue && last:
				word += "=" + value
			case f.bare != "" && last:
				word += "=" + f.bare
			case f.value && last:
				if i+1 == len(args) {
					return line, usageErr("--%s needs a value: %s", f.name, f.hint)
				}
				i++
				word += "=" + args[i]
			}
			if afterPrompt {
				if err := checkAfterPrompt(f, word); err != nil {
					return line, err
				}
			}
			read = append(read, flagWord{spec: f, word: word, at: len(line.path) - 1})
		}
	}
	return line, nil
}

// place gives each flag read to the deepest command of the line that
// declares it; an unknown one stays where it was typed.
func (l *commandLine) place(read []flagWord) {
	l.flags = make([][]string, len(l.path))
	for _, f := range read {
		to := f.at
		if f.spec.name != "" {
			to = l.deepest(f.spec)
		}
		l.flags[to] = append(l.flags[to], f.word)
	}
}

// expand reads a flag word against the commands named so far, deepest
// first: one flag (-q, --quiet, --max-steps=3) or, where runs are allowed,
// a run of one-letter switches whose last letter may take a value (-qy,
// -qa x.png). ok is false for a word no command knows.
func (l commandLine) expand(a string, runs bool) ([]flagSpec, bool) {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	if f, ok := l.lookup(name); ok {
		return []flagSpec{f}, true
	}
	letters := a[1:]
	if !runs || a[1] == '-' || strings.Contains(letters, "=") {
		return nil, false
	}
	var out []flagSpec
	for i, r := range letters {
		f, ok := l.lookup(string(r))
		if !ok || f.value && i != len(letters)-1 {
			return nil, false
		}
		out = append(out, f)
	}
	return out, true
}

// lookup finds a flag by one of its names in the commands named so far,
// deepest first.
func (l commandLine) lookup(name string) (flagSpec, bool) {
	for i := len(l.path) - 1; i >= 0; i-- {
		if f, ok := l.path[i].flags[name]; ok {
			return f, true
		}
	}
	return flagSpec{}, false
}

// deepest is the last command of the line that declares a flag of f's name
// and kind.
func (l commandLine) deepest(f flagSpec) int {
	for i := len(l.path) - 1; i > 0; i-- {
		if g, ok := l.path[i].flags[f.name]; ok && g.value == f.value {
			return i
		}
	}
	return 0
}

// checkAfterPrompt refuses a flag after the prompt whose value could widen
// what the model may do (its row's widening mark): a file name that spells
// a flag must not widen a run. A value the row refuses is left for the
// flag's own error.
func checkAfterPrompt(f flagSpec, word string) error {
	if f.inert {
		return nil
	}
	if f.row != nil {
		_, value, hasValue := strings.Cut(word, "=")
		if !hasValue {
			value = "true" // a switch turned on
		}
		v, err := f.row.Parse(value)
		if err != nil || f.row.Widens(v) == "" {
			return nil
		}
	}
	return usageErr("%s after the prompt could widen what the model may do: put it before the prompt, or put -- before the prompt to send the word as text", word)
}

// argv is the line as urfave/cli reads it, prog first.
func (l commandLine) argv(prog string) []string {
	out := []string{prog}
	for i, c := range l.path {
		if i > 0 {
			out = append(out, c.name)
		}
		out = append(out, l.flags[i]...)
	}
	if len(l.args) > 0 {
		out = append(out, "--")
	}
	return append(out, l.args...)
}

// typed lists the flags the line gives, by long name, whichever command
// they went to: each went to one.
func (l commandLine) typed() map[string]bool {
	out := map[string]bool{}
	for _, words := range l.flags {
		for _, w := range words {
			if n, _, _ := strings.Cut(w, "="); strings.HasPrefix(n, "--") {
				out[n[2:]] = true
			}
		}
	}
	return out
}

// mainFlag is the last value of a main command's flag given on the line,
// for what must be known before urfave/cli runs (--profile, --color).
func (l commandLine) mainFlag(name string) (string, bool) {
	value, found := "", false
	for _, w := range l.flags[0] {
		if v, ok := strings.CutPrefix(w, "--"+name+"="); ok {
			value, found = v, true
		}
	}
	return value, found
}

func (c *commandSpec) sub(word string) *commandSpec {
	for _, s := range c.subs {
		if slices.Contains(s.names, word) {
			if s.load != nil {
				s.loaded.Do(func() { s.read(s.load(), c.name) })
			}
			return s
		}
	}
	return nil
}
