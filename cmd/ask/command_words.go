package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

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

// commandWords checks the prompt words of args before they are run. It
// returns the arguments to run instead (help and version), or an error
// for a prompt that looks like a command; args unchanged otherwise.
func commandWords(app *cli.App, args []string) ([]string, error) {
	words, forced := promptWords(app, args)
	if forced || len(words) == 0 || len(words) > maxCommandLikeWords {
		return args, nil
	}
	for _, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n") {
			return args, nil // quoted: a prompt
		}
	}
	switch {
	case len(words) == 1 && words[0] == "help":
		return []string{args[0], "--help"}, nil
	case len(words) == 2 && words[0] == "help" && isCommand(app, words[1]):
		return []string{args[0], words[1], "--help"}, nil
	case len(words) == 1 && words[0] == "version":
		return []string{args[0], "--version"}, nil
	}
	name, ok := nearCommand(app, words[0])
	if !ok {
		return args, nil
	}
	typed := strings.Join(words, " ")
	meant := strings.Join(append([]string{name}, words[1:]...), " ")
	if name == "help" || name == "version" {
		meant = name
	}
	return nil, usageErr("%q looks like the command \"ask %s\", so it was not sent to the model; to send it as a prompt, put -- before it: ask -- %s",
		typed, meant, typed)
}

// promptWords are the positional arguments of the main command in args,
// as reorderArgs finds them; forced is true when the user typed "--"
// before them. A command name first means no prompt at all.
func promptWords(app *cli.App, args []string) (words []string, forced bool) {
	if len(args) < 2 {
		return nil, false
	}
	forms := formsOf(app.Flags)
	if i := forms.firstPositional(args[1:]); i >= 0 && isCommand(app, args[1+i]) {
		return nil, false
	}
	_, words, forced, _ = forms.mainArgs(args[1:])
	if forced {
		return nil, true
	}
	return words, false
}

func isCommand(app *cli.App, name string) bool {
	for _, c := range app.Commands {
		if slices.Contains(c.Names(), name) {
			return true
		}
	}
	return false
}

// nearCommand returns the command name (or help, version) that word is
// exactly or one edit away from.
func nearCommand(app *cli.App, word string) (string, bool) {
	names := []string{"help", "version"}
	for _, c := range app.Commands {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	w := strings.ToLower(word)
	n := suggest.Nearest(w, names, 1)
	// A short word one edit from a short name is more often a word ("dog"
	// is not "log").
	if n == w || n != "" && len(w) >= minNearWord {
		return n, true
	}
	return "", false
}
