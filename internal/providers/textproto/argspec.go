package textproto

import (
	"slices"
	"strings"
)

// argSpec maps the words of a markdown call (`read_file go.mod 10`) onto a
// tool's parameters. Every parameter can also be given as --name VALUE or
// --name=VALUE (dashes in NAME stand for underscores), and any tool accepts
// its parameters as one JSON object (`read_file {"path": "go.mod"}`).
type argSpec struct {
	// positional parameters take the bare words (and heredoc bodies), in
	// order, skipping those already given as options.
	positional []string
	// flags maps short options to parameters; a boolean parameter is a
	// switch that takes no value.
	flags map[string]string
	// rest, when set, is the parameter that takes the whole text after the
	// tool name, unsplit, with any further lines of the block.
	rest string
	// body, when set, is the parameter that takes the block's further lines
	// when no heredoc gives it.
	body string
	// usage shows the form in the instructions.
	usage string
}

// builtinSpecs are the mappings for ask's built-in tools (internal/tools).
// One applies only when the tool's schema has every parameter it names, so
// a user tool that reuses a name gets the generic mapping instead.
var builtinSpecs = map[string]argSpec{
	"read_file": {
		positional: []string{"path", "offset", "limit"},
		flags:      map[string]string{"-o": "offset", "-n": "limit", "-l": "limit"},
		usage:      "read_file PATH [OFFSET [LIMIT]]",
	},
	"list_directory": {
		positional: []string{"path"},
		usage:      "list_directory [PATH]",
	},
	"search": {
		positional: []string{"pattern", "path"},
		flags:      map[string]string{"-t": "pattern", "-e": "pattern", "-g": "glob", "-r": "regex", "-E": "regex"},
		usage:      "search [-g GLOB] [-r] PATTERN [PATH]   (-r: PATTERN is a regular expression)",
	},
	"edit_file": {
		positional: []string{"path", "old_text", "new_text"},
		usage:      "edit_file PATH <<'OLD' <<'NEW'\nexact old text\nOLD\nnew text\nNEW",
	},
	"write_file": {
		positional: []string{"path", "content"},
		body:       "content",
		usage:      "write_file PATH <<'EOF'\nfile content\nEOF",
	},
	"shell": {
		rest:  "command",
		usage: "shell COMMAND",
	},
}

// specFor returns the mapping of one tool: its built-in one when it fits
// the schema, else one derived from the schema.
func specFor(name string, s schema) argSpec {
	if b, ok := builtinSpecs[name]; ok && b.fits(s) {
		return b
	}
	return genericSpec(name, s)
}

func (a argSpec) fits(s schema) bool {
	names := append([]string(nil), a.positional...)
	for _, p := range a.flags {
		names = append(names, p)
	}
	if a.rest != "" {
		names = append(names, a.rest)
	}
	if a.body != "" {
		names = append(names, a.body)
	}
	return !slices.ContainsFunc(names, func(n string) bool { return s.find(n) == nil })
}

// genericSpec maps a tool nothing is known about: a single text parameter
// takes the whole rest of the line; otherwise the required parameters,
// then the others, are positional in schema order.
func genericSpec(name string, s schema) argSpec {
	if len(s.params) == 1 && isText(s.params[0]) {
		return argSpec{rest: s.params[0].name, usage: name + " " + strings.ToUpper(s.params[0].name)}
	}
	var spec argSpec
	usage := []string{name}
	for _, required := range []bool{true, false} {
		for _, p := range s.params {
			if p.required != required {
				continue
			}
			spec.positional = append(spec.positional, p.name)
			word := strings.ToUpper(p.name)
			if isSwitch(&p) {
				word = "--" + strings.ReplaceAll(p.name, "_", "-")
			}
			if !required {
				word = "[" + word + "]"
			}
			usage = append(usage, word)
		}
	}
	spec.usage = strings.Join(usage, " ")
	return spec
}

func isText(p param) bool { return len(p.types) == 0 || slices.Equal(p.types, []string{"string"}) }

// isSwitch reports whether a parameter is a flag that takes no value.
func isSwitch(p *param) bool { return slices.Equal(p.types, []string{"boolean"}) }
