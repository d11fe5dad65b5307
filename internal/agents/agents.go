// Package agents reads subagent definitions (Claude Code's Markdown files
// with YAML front matter: name, description, tools, disallowedTools,
// model, maxTurns, permissionMode; other keys ignored) and carves a
// child run's settings from its parent's: the definition may only narrow
// them (DESIGN §1, §9).
package agents

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ask-cli/ask/internal/frontmatter"
)

// Definition is one subagent definition.
type Definition struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tools       []string `json:"tools,omitempty"`
	// Disallowed is disallowedTools: deny rules the child adds.
	Disallowed     []string `json:"disallowed_tools,omitempty"`
	Model          string   `json:"model,omitempty"`
	MaxTurns       int      `json:"max_turns,omitempty"`
	PermissionMode string   `json:"permission_mode,omitempty"`
	// Prompt is the body: the child's instructions.
	Prompt string `json:"-"`
	Path   string `json:"path"`
	// toolsGiven: the front matter has tools, even an empty list (which
	// leaves the child no tool).
	toolsGiven bool
}

// head is the front matter, as Claude Code's subagents write it; other
// keys are ignored.
type head struct {
	name, description, model, permissionMode string
	tools                                    *[]string // nil when not given
	disallowed                               []string
	maxTurns                                 int
}

func readHead(f frontmatter.Fields) (head, error) {
	var h head
	var err [7]error
	h.name, err[0] = f.String("name")
	h.description, err[1] = f.String("description")
	h.model, err[2] = f.String("model")
	h.permissionMode, err[3] = f.String("permissionMode")
	h.maxTurns, err[4] = f.Int("maxTurns")
	if v := f.Get("tools"); !v.IsNull() {
		var tools []string
		tools, err[5] = toolList(v)
		h.tools = &tools
	}
	h.disallowed, err[6] = toolList(f.Get("disallowedTools"))
	return h, cmp.Or(err[:]...) // the first error, if any
}

// toolList reads a comma-separated string ("Read, Grep, Bash(git log:*)")
// or a YAML list.
func toolList(v frontmatter.Value) ([]string, error) {
	if v.IsNull() {
		return nil, nil
	}
	if s, ok := v.Scalar(); ok {
		var out []string
		for _, e := range strings.Split(s, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
		return out, nil
	}
	list, ok := v.List()
	if !ok {
		return nil, errors.New("a tool list must be a string of names separated by commas, or a list of them")
	}
	return slices.DeleteFunc(list, func(e string) bool { return strings.TrimSpace(e) == "" }), nil
}

// Parse reads one definition from the file path (its name, without .md,
// is the name when the front matter gives none).
func Parse(data []byte, path string) (Definition, error) {
	f, body, err := frontmatter.Parse(data)
	if err != nil {
		return Definition{}, err
	}
	h, err := readHead(f)
	if err != nil {
		return Definition{}, err
	}
	name := h.name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".md")
	}
	if !validName(name) {
		return Definition{}, fmt.Errorf("name %q: use letters, digits, '-' and '_' (at most 64)", name)
	}
	if h.maxTurns < 0 {
		return Definition{}, fmt.Errorf("maxTurns %d: must be 1 or more", h.maxTurns)
	}
	d := Definition{Name: name, Description: strings.TrimSpace(h.description), Disallowed: h.disallowed, Model: strings.TrimSpace(h.model),
		MaxTurns: h.maxTurns, PermissionMode: strings.TrimSpace(h.permissionMode), Prompt: strings.TrimSpace(body), Path: path}
	if h.tools != nil {
		d.Tools, d.toolsGiven = *h.tools, true
	}
	return d, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Places are where definitions are looked for, in order: see
// frontmatter.Places.
func Places(workdir, root, configHome, home string) []string {
	return frontmatter.Places("agents", workdir, root, configHome, home)
}

// Find reads the definitions (NAME.md) of each place in order; the first
// of a name wins. One that cannot be read is left out with a one-line
// warning naming its file.
func Find(places []string) (found []Definition, warnings []string) {
	return frontmatter.Find("agent", places, func(place string, e fs.DirEntry) (Definition, string, string, error) {
		path := filepath.Join(place, e.Name())
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			return Definition{}, "", path, frontmatter.ErrNoDefinition
		}
		d, err := read(path)
		return d, d.Name, path, err
	})
}

// read reads one definition inside its place: a file that is a link out
// of it is refused (see skills.read).
func read(path string) (Definition, error) {
	data, err := frontmatter.ReadIn(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return Definition{}, err
	}
	return Parse(data, path)
}

// Lookup finds a definition by name.
func Lookup(all []Definition, name string) (Definition, bool) {
	i := slices.IndexFunc(all, func(d Definition) bool { return d.Name == name })
	if i < 0 {
		return Definition{}, false
	}
	return all[i], true
}
