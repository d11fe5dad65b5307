// Package agents reads subagent definitions (Claude Code's Markdown files
// with YAML front matter: name, description, tools, disallowedTools,
// model, maxTurns, permissionMode; other keys ignored) and carves a
// child run's settings from its parent's: the definition may only narrow
// them (DESIGN §1, §9).
package agents

import (
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

type head struct {
	Name           string    `yaml:"name"`
	Description    string    `yaml:"description"`
	Tools          *toolList `yaml:"tools"`
	Disallowed     toolList  `yaml:"disallowedTools"`
	Model          string    `yaml:"model"`
	MaxTurns       int       `yaml:"maxTurns"`
	PermissionMode string    `yaml:"permissionMode"`
}

// toolList reads a comma-separated string ("Read, Grep, Bash(git log:*)")
// or a YAML list.
type toolList []string

func (t *toolList) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err == nil {
		*t = nil
		for _, e := range strings.Split(s, ",") {
			if e = strings.TrimSpace(e); e != "" {
				*t = append(*t, e)
			}
		}
		return nil
	}
	var list []string
	if err := unmarshal(&list); err != nil {
		return errors.New("a tool list must be a string of names separated by commas, or a list of them")
	}
	*t = slices.DeleteFunc(list, func(e string) bool { return strings.TrimSpace(e) == "" })
	return nil
}

// Parse reads one definition from the file path (its name, without .md,
// is the name when the front matter gives none).
func Parse(data []byte, path string) (Definition, error) {
	var h head
	body, err := frontmatter.Parse(data, &h)
	if err != nil {
		return Definition{}, err
	}
	name := h.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".md")
	}
	if !validName(name) {
		return Definition{}, fmt.Errorf("name %q: use letters, digits, '-' and '_' (at most 64)", name)
	}
	if h.MaxTurns < 0 {
		return Definition{}, fmt.Errorf("maxTurns %d: must be 1 or more", h.MaxTurns)
	}
	d := Definition{Name: name, Description: strings.TrimSpace(h.Description), Disallowed: h.Disallowed, Model: strings.TrimSpace(h.Model),
		MaxTurns: h.MaxTurns, PermissionMode: strings.TrimSpace(h.PermissionMode), Prompt: strings.TrimSpace(body), Path: path}
	if h.Tools != nil {
		d.Tools, d.toolsGiven = *h.Tools, true
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
