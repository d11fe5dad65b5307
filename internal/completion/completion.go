// Package completion writes bash, zsh and fish completion scripts for a
// program described as a tree of commands and flags. It knows no CLI
// library: the program converts its own commands into a Command tree, so
// the scripts never fall behind them. The scripts are static but for a
// flag's ValuesFrom, a command they run at <Tab>.
package completion

import (
	"sort"
	"strings"
)

// Shells are the shells a script can be written for.
func Shells() []string { return []string{"bash", "zsh", "fish"} }

// For is the writer of shell's script, nil for a shell it does not know.
func For(shell string) func(*Command) string {
	return map[string]func(*Command) string{"bash": Bash, "zsh": Zsh, "fish": Fish}[shell]
}

// Command is the program (the root, named after it) or one of its
// commands.
type Command struct {
	Name        string
	Aliases     []string
	Usage       string // one line, for menus
	Flags       []Flag
	Subcommands []*Command
	// Args are the fixed words its positional argument takes; without them
	// the argument is anything, completed as a file.
	Args []string
}

// Flag is a flag of a command.
type Flag struct {
	Names       []string // without dashes; a one-letter name is short (-p)
	Usage       string   // one line, for menus
	TakesValue  bool
	Repeatable  bool     // may be given more than once
	Placeholder string   // what the value is called in help ("FILE"); "" is the flag's name
	Values      []string // the fixed words the value is one of
	// ValuesFrom is a command line whose output, one value a line, is
	// what the value may be, read at <Tab> (profile names from a config
	// file); its errors are dropped.
	ValuesFrom string
	Kind       Kind // what the value is when it is neither
}

// Kind is what a flag's value is.
type Kind string

const (
	Any  Kind = ""
	File Kind = "file"
	Dir  Kind = "dir"
)

// node is a command with the names leading to it from the root.
type node struct {
	*Command
	path []*Command // from the first command below the root to this one; empty at the root
}

// walk lists the root and its descendants, depth first.
func walk(root *Command) []node {
	var out []node
	var visit func(c *Command, path []*Command)
	visit = func(c *Command, path []*Command) {
		out = append(out, node{c, path})
		for _, s := range c.Subcommands {
			visit(s, append(append([]*Command{}, path...), s))
		}
	}
	visit(root, nil)
	return out
}

// names is the command's path as names, e.g. ["provider", "list"].
func (n node) names() []string {
	var out []string
	for _, c := range n.path {
		out = append(out, c.Name)
	}
	return out
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// dashedNames are the flag's names as typed.
func (f Flag) dashedNames() []string {
	var out []string
	for _, n := range f.Names {
		out = append(out, dashed(n))
	}
	return out
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func sorted(list []string) []string {
	out := append([]string{}, list...)
	sort.Strings(out)
	return out
}

// progIdent is the program's name as part of a shell function's name.
func progIdent(prog string) string { return strings.ReplaceAll(prog, "-", "_") }
