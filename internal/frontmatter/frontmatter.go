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
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ask-cli/ask/internal/noblock"
)

// MaxSize is the largest file read: a definition is a page of text, and
// a repository must not make every run read a huge file.
const MaxSize = 256 << 10

// ErrNone is returned for a file that does not open with front matter.
var ErrNone = errors.New("no front matter: the file must open with a line \"---\", then YAML, then a line \"---\"")

// Parse splits data into its front matter, decoded into v (a pointer to a
// struct or map), and the body after it. Keys v does not know are
// ignored, as both formats ask.
func Parse(data []byte, v any) (body string, err error) {
	if len(data) > MaxSize {
		return "", fmt.Errorf("%d bytes, more than the %d a definition may have", len(data), MaxSize)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a byte-order mark
	first, rest, ok := cutLine(data)
	if !ok || string(bytes.TrimRight(first, " \t")) != "---" {
		return "", ErrNone
	}
	var head []byte
	for {
		line, after, more := cutLine(rest)
		if string(bytes.TrimRight(line, " \t")) == "---" {
			body = string(after)
			break
		}
		if !more {
			return "", errors.New("front matter never ends: close it with a line \"---\"")
		}
		head = append(head, line...)
		head = append(head, '\n')
		rest = after
	}
	if err := yaml.Unmarshal(head, v); err != nil {
		return "", fmt.Errorf("front matter: %w", oneLine(err))
	}
	return body, nil
}

// cutLine returns the first line of b without its end (\n or \r\n), and
// what follows; more is false when b holds no line end.
func cutLine(b []byte) (line, rest []byte, more bool) {
	line, rest, more = bytes.Cut(b, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), rest, more
}

// oneLine makes a YAML error fit the one-line warning it becomes.
func oneLine(err error) error {
	msg := string(bytes.Join(bytes.Fields([]byte(err.Error())), []byte(" ")))
	return errors.New(msg)
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
