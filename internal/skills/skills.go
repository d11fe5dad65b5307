// Package skills finds Agent Skills (agentskills.io's SKILL.md: a folder
// whose SKILL.md opens with YAML front matter naming the skill and saying
// when to use it) and serves them to a run: a list for the system prompt,
// and the read-only skill tool that returns one skill's instructions and
// files.
package skills

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ask-cli/ask/internal/frontmatter"
)

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// The spec's limits on the front matter's fields.
const (
	maxName          = 64
	maxDescription   = 1024
	maxCompatibility = 500
)

// Skill is one skill found on disk.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// AllowedTools is the front matter's allowed-tools as written, nil when
	// it names none. While the skill is active it only narrows what the
	// run allows.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Dir is the skill's folder; Path its SKILL.md.
	Dir  string `json:"dir"`
	Path string `json:"path"`
	// Body is the instructions after the front matter.
	Body string `json:"-"`
}

// allowedTools reads allowed-tools as the spec's space-separated string,
// or as the YAML list Claude Code also accepts.
func allowedTools(v frontmatter.Value) ([]string, error) {
	if v.IsNull() {
		return nil, nil
	}
	if s, ok := v.Scalar(); ok {
		return splitTools(s), nil
	}
	list, ok := v.List()
	if !ok {
		return nil, errors.New("allowed-tools must be a string of tool names or a list of them")
	}
	var out []string
	for _, item := range list {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item) // an entry of a list is one, spaces and all
		}
	}
	return out, nil
}

// splitTools splits a tool list at spaces and commas, but not inside
// parentheses: "Bash(git diff:*) Read" is two entries.
func splitTools(s string) []string {
	var out []string
	depth, start := 0, -1
	flush := func(end int) {
		if start >= 0 {
			out = append(out, s[start:end])
		}
		start = -1
	}
	for i, c := range s {
		switch {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case (c == ' ' || c == ',' || c == '\t' || c == '\n') && depth == 0:
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return out
}

// head is the front matter as the spec writes it; other keys are ignored.
type head struct {
	name, description, compatibility string
	allowedTools                     []string
}

func readHead(f frontmatter.Fields) (head, error) {
	var h head
	var err [4]error
	h.name, err[0] = f.String("name")
	h.description, err[1] = f.String("description")
	h.compatibility, err[2] = f.String("compatibility")
	h.allowedTools, err[3] = allowedTools(f.Get("allowed-tools"))
	return h, cmp.Or(err[:]...) // the first error, if any
}

// Parse reads a SKILL.md found in the folder dir. It checks what the spec
// requires: a name of lowercase letters, digits and single hyphens that
// names its folder, and a description, each within its length.
func Parse(data []byte, dir string) (Skill, error) {
	f, body, err := frontmatter.Parse(data)
	if err != nil {
		return Skill{}, err
	}
	h, err := readHead(f)
	if err != nil {
		return Skill{}, err
	}
	if err := CheckName(h.name); err != nil {
		return Skill{}, err
	}
	if folder := filepath.Base(dir); h.name != folder {
		return Skill{}, fmt.Errorf("name %q does not match its folder %q: rename one", h.name, folder)
	}
	desc := strings.TrimSpace(h.description)
	switch {
	case desc == "":
		return Skill{}, errors.New("no description: say what the skill does and when to use it")
	case len(desc) > maxDescription:
		return Skill{}, fmt.Errorf("description is %d characters, more than %d", len(desc), maxDescription)
	case len(h.compatibility) > maxCompatibility:
		return Skill{}, fmt.Errorf("compatibility is %d characters, more than %d", len(h.compatibility), maxCompatibility)
	}
	return Skill{Name: h.name, Description: desc, AllowedTools: h.allowedTools, Dir: dir, Path: filepath.Join(dir, FileName), Body: strings.TrimSpace(body)}, nil
}

// CheckName says what is wrong with a skill's name by the spec's rule, nil
// when nothing is.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("no name: give the skill's folder name as name")
	case len(name) > maxName:
		return fmt.Errorf("name is %d characters, more than %d", len(name), maxName)
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") || strings.Contains(name, "--"):
		return fmt.Errorf("name %q: a hyphen may not start or end it, nor follow another", name)
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return fmt.Errorf("name %q: only lowercase letters, digits and hyphens", name)
		}
	}
	return nil
}

// Places are where skills are looked for, in order (DESIGN §9): see
// frontmatter.Places.
func Places(workdir, root, configHome, home string) []string {
	return frontmatter.Places("skills", workdir, root, configHome, home)
}

// Find reads the skills of each place in order; the first skill of a name
// wins. A skill that cannot be read or breaks the spec is left out with a
// warning of one line naming its file; a place that is not there is no
// warning.
func Find(places []string) (found []Skill, warnings []string) {
	return frontmatter.Find("skill", places, func(place string, e fs.DirEntry) (Skill, string, string, error) {
		dir := filepath.Join(place, e.Name())
		path := filepath.Join(dir, FileName)
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return Skill{}, "", path, frontmatter.ErrNoDefinition
		}
		s, err := read(path, dir)
		if errors.Is(err, fs.ErrNotExist) {
			return s, "", path, frontmatter.ErrNoDefinition
		}
		return s, s.Name, path, err
	})
}

// read reads and parses one SKILL.md; one larger than a definition may
// be is not read past that. It is read inside its folder: a SKILL.md that
// is a link out of it (to a key, a config file) is refused, so that a
// repository cannot make ask send the user's other files to a provider.
func read(path, dir string) (Skill, error) {
	data, err := frontmatter.ReadIn(dir, FileName)
	if err != nil {
		return Skill{}, err
	}
	return Parse(data, dir)
}

// Lookup finds a skill by name.
func Lookup(all []Skill, name string) (Skill, bool) {
	i := slices.IndexFunc(all, func(s Skill) bool { return s.Name == name })
	if i < 0 {
		return Skill{}, false
	}
	return all[i], true
}

// Names are the skills' names, in order.
func Names(all []Skill) []string {
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.Name
	}
	return out
}
