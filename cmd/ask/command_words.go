package main

import (
	"strings"

	"github.com/ask-cli/ask/internal/suggest"
)

// Words that are commands are not paid prompts (DESIGN §4). `ask help`
// and `ask version` run locally; a prompt of up to three words whose first
// is one edit away from a command's name (`ask tool list`, `ask replya`)
// is not sent: ask names the command it looks like. One rule makes any of
// them a prompt: `--` before it (`ask -- tool list`). A prompt given as one
// quoted argument holding a space is a prompt too, since no command name
// has one.

// maxCommandLikeWords is how long a prompt may be and still be taken for a
// mistyped command: a longer one is a sentence.
const maxCommandLikeWords = 3

// minNearWord is the shortest word taken for a mistyped command name.
const minNearWord = 4

// commandWords checks the prompt words of the line before it runs. It
// returns the arguments urfave/cli runs: the line's, or help and version;
// or an error for a prompt that looks like a command.
func commandWords(line commandLine, prog string) ([]string, error) {
	words := line.args
	if len(line.path) > 1 || line.forced || len(words) == 0 || len(words) > maxCommandLikeWords {
		return line.argv(prog), nil
	}
	for _, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n") {
			return line.argv(prog), nil // quoted: a prompt
		}
	}
	main := line.path[0]
	switch {
	case len(words) == 1 && words[0] == "help":
		return []string{prog, "--help"}, nil
	case len(words) == 2 && words[0] == "help" && main.sub(words[1]) != nil:
		return []string{prog, words[1], "--help"}, nil
	case len(words) == 1 && words[0] == "version":
		return []string{prog, "--version"}, nil
	}
	// "help" or "version" going on in other words is a prompt: ask help me
	// fix the build, ask version control tips.
	if words[0] == "help" || words[0] == "version" {
		return line.argv(prog), nil
	}
	name, ok := nearCommand(main, words)
	if !ok {
		return line.argv(prog), nil
	}
	typed := strings.Join(words, " ")
	meant := strings.Join(append([]string{name}, words[1:]...), " ")
	if name == "help" || name == "version" {
		meant = name
	}
	return nil, usageErr("%q looks like the command \"ask %s\", so it was not sent to the model; to send it as a prompt, put -- before it: ask -- %s",
		typed, meant, typed)
}

// nearCommand returns the command name (or help, version) that the first
// word is exactly or one edit away from.
func nearCommand(main *commandSpec, words []string) (string, bool) {
	word := words[0]
	names := []string{"help", "version"}
	for _, c := range main.subs {
		if !c.hidden {
			names = append(names, c.name)
		}
	}
	w := strings.ToLower(word)
	n := suggest.Nearest(w, names, 1)
	// A short word one edit from a short name is more often a word ("dog"
	// is not "log"), unless the edit is a swap of the name's own letters
	// ("lgo") or the next word is one of the command's subcommands ("lgo
	// show last").
	switch {
	case n == w, n != "" && len(w) >= minNearWord:
		return n, true
	case n != "" && (swapped(w, n) || len(words) > 1 && main.sub(n) != nil && main.sub(n).sub(words[1]) != nil):
		return n, true
	}
	return "", false
}

// swapped reports whether a is b with two neighbouring letters swapped.
func swapped(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i+1 < len(a); i++ {
		if a[i] != b[i] {
			return a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
		}
	}
	return false
}
