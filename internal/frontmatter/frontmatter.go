// Package frontmatter reads the YAML front matter that opens a Markdown
// file (a skill's SKILL.md, an agent definition): the lines between a
// first line "---" and the next line "---", then the body.
package frontmatter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ask-cli/ask/internal/noblock"
)

// MaxSize is the largest file read: a definition is a page of text, and
// a repository must not make every run read a huge file.
const MaxSize = 256 << 10

// ErrNone is returned for a file that does not open with front matter.
var ErrNone = errors.New("no front matter: the file must open with a line \"---\", then YAML, then a line \"---\"")

// Parse splits data into its front matter and the body after it. Keys
// the caller does not ask for are ignored, as both formats ask.
func Parse(data []byte) (fields Fields, body string, err error) {
	if len(data) > MaxSize {
		return Fields{}, "", fmt.Errorf("%d bytes, more than the %d a definition may have", len(data), MaxSize)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a byte-order mark
	first, rest, ok := cutLine(data)
	if !ok || string(bytes.TrimRight(first, " \t")) != "---" {
		return Fields{}, "", ErrNone
	}
	var head []string
	for {
		line, after, more := cutLine(rest)
		if string(bytes.TrimRight(line, " \t")) == "---" {
			body = string(after)
			break
		}
		if !more {
			return Fields{}, "", errors.New("front matter never ends: close it with a line \"---\"")
		}
		head = append(head, string(line))
		rest = after
	}
	v, err := readYAML(head)
	if err != nil {
		return Fields{}, "", fmt.Errorf("front matter: %w", err)
	}
	for i, k := range v.keys {
		if slices.Contains(v.keys[:i], k) {
			return Fields{}, "", fmt.Errorf("front matter: the key %q is given twice", k)
		}
	}
	return Fields{v}, body, nil
}

// Fields are front matter's keys and their values.
type Fields struct{ m Value }

// Get is key's value: null when the key is absent.
func (f Fields) Get(key string) Value {
	for i, k := range f.m.keys {
		if k == key {
			return f.m.vals[i]
		}
	}
	return Value{}
}

// String is key's value as text: "" when absent or null, an error when it
// is a list or mapping.
func (f Fields) String(key string) (string, error) {
	switch v := f.Get(key); v.kind {
	case listNode, mapNode:
		return "", fmt.Errorf("%s is a %s: give it as text", key, v.kind)
	case scalarNode:
		return v.text, nil
	}
	return "", nil
}

// Int is key's value as a whole number written in decimal: 0 when absent
// or null.
func (f Fields) Int(key string) (int, error) {
	v := f.Get(key)
	if v.kind == nullNode {
		return 0, nil
	}
	digits := strings.TrimPrefix(strings.TrimPrefix(v.text, "-"), "+")
	n, err := strconv.Atoi(v.text)
	if v.kind != scalarNode || !v.plain || err != nil || digits == "" || len(digits) > 1 && digits[0] == '0' {
		return 0, fmt.Errorf("%s must be a whole number such as 10", key)
	}
	return n, nil
}

// IsNull reports whether the value is null (or absent).
func (v Value) IsNull() bool { return v.kind == nullNode }

// Scalar is a scalar's text; false for a null, a list or a mapping.
func (v Value) Scalar() (string, bool) {
	if v.kind != scalarNode {
		return "", false
	}
	return v.text, true
}

// List is a list's items as text, a null item as ""; false for anything
// but a list of scalars.
func (v Value) List() ([]string, bool) {
	if v.kind != listNode {
		return nil, false
	}
	out := make([]string, 0, len(v.items))
	for _, it := range v.items {
		text, ok := it.Scalar()
		if !ok && !it.IsNull() {
			return nil, false
		}
		out = append(out, text)
	}
	return out, true
}

// cutLine returns the first line of b without its end (\n or \r\n), and
// what follows; more is false when b holds no line end.
func cutLine(b []byte) (line, rest []byte, more bool) {
	line, rest, more = bytes.Cut(b, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), rest, more
}

// Places are where definitions of a kind ("skills", "agents") are looked
// for, in order (DESIGN §9): .agents/KIND in the workdir and each parent
// up to the repository root, then $XDG_CONFIG_HOME/ask/KIND and
// ~/.agents/KIND; then .claude/KIND in the same places (~/.claude/KIND for
// the user's own). root is "" outside a repository: only the workdir's own
// are read there, since a parent's are not the project's.
func Places(kind, workdir, root, configHome, home string) []string {
	var out []string
	for _, sub := range []string{".agents", ".claude"} {
		for d := workdir; ; d = filepath.Dir(d) {
			out = append(out, filepath.Join(d, sub, kind))
			if root == "" || d == root || d == filepath.Dir(d) || !strings.HasPrefix(d, root) {
				break
			}
		}
		if sub == ".agents" && configHome != "" {
			out = append(out, filepath.Join(configHome, "ask", kind))
		}
		if home != "" {
			out = append(out, filepath.Join(home, sub, kind))
		}
	}
	return slices.Compact(out)
}

// ReadIn reads the file name inside dir, never through a link or a path
// that leads out of dir, and never more than MaxSize and a byte (which
// Parse refuses).
func ReadIn(dir, name string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// Opened without blocking: a fifo planted as SKILL.md must not hang
	// every run that looks for skills here.
	f, info, err := noblock.OpenIn(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !info.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, MaxSize+1))
}

// ErrNoDefinition is what Find's read returns for an entry of a place
// that holds no definition (a file of another kind, a folder without one).
var ErrNoDefinition = errors.New("no definition here")

// Find reads the definitions in each place, in order: read reads the one
// an entry of a place holds, returning its name and the file it read, or
// ErrNoDefinition for an entry that holds none. The first
// definition of a name wins. A place that cannot be listed, or an entry
// that cannot be read, is left out with a one-line warning naming it (noun
// is what a definition is called: "skill", "agent"); a place that is not
// there, or not the user's to list, is no warning.
func Find[T any](noun string, places []string, read func(place string, e fs.DirEntry) (def T, name, path string, err error)) (found []T, warnings []string) {
	seen := map[string]bool{}
	for _, place := range places {
		entries, err := os.ReadDir(place)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
				warnings = append(warnings, fmt.Sprintf("%ss in %s left out: %v", noun, place, err))
			}
			continue
		}
		for _, e := range entries {
			def, name, path, err := read(place, e)
			switch {
			case err == ErrNoDefinition:
				continue
			case err != nil:
				warnings = append(warnings, fmt.Sprintf("%s %s left out: %v", noun, path, err))
				continue
			case seen[name]:
				continue
			}
			seen[name] = true
			found = append(found, def)
		}
	}
	return found, warnings
}
