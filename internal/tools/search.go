package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ask-cli/ask/internal/noblock"
	"github.com/ask-cli/ask/internal/termtext"
)

const (
	searchMaxMatches  = 20
	searchMaxFileSize = 2 << 20 // larger files are mostly data, logs or bundles
	searchMaxLineLen  = 300
)

// skippedDirs are never searched: version-control internals and vendored
// dependencies drown real matches.
var skippedDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, "node_modules": true}

// vcsDirs are skipped even when the model asks for ignored files.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true}

type search struct{ root *Root }

func (search) Info() Info {
	return Info{
		Name:        "search",
		Description: "Search text files for a pattern (skips what .gitignore ignores, .git, node_modules, binary and large files). Prints \"file:line: text\" with a line of context around; at most 20 matches.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","minLength":1},` +
			`"path":{"type":"string","description":"file or directory, default \".\""},` +
			`"glob":{"type":"string","description":"file name filter, e.g. *.go"},` +
			`"regex":{"type":"boolean","description":"pattern is a Go regexp (default: literal)"},` +
			`"include_ignored":{"type":"boolean","description":"also search files that .gitignore ignores, and node_modules"}},` +
			`"required":["pattern"]}`),
		Risk: Read,
	}
}

func (t search) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
		Glob    string `json:"glob"`
		Regex   bool   `json:"regex"`
		// IncludeIgnored searches what the ignore files leave out.
		IncludeIgnored bool `json:"include_ignored"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return "", err
	}
	if args.Path == "" {
		args.Path = "."
	}
	match := func(line []byte) bool { return bytes.Contains(line, []byte(args.Pattern)) }
	literal := []byte(args.Pattern)
	if args.Regex {
		re, err := regexp.Compile(args.Pattern)
		if err != nil {
			return "", fmt.Errorf("search: invalid regex: %w (or set regex to false to search for the text literally)", err)
		}
		match, literal = re.Match, nil
	}
	if args.Glob != "" {
		if _, err := path.Match(args.Glob, ""); err != nil {
			return "", fmt.Errorf("search: invalid glob %q: %w", args.Glob, err)
		}
	}

	osRoot, rel, err := t.root.openRel(args.Path, false)
	if err != nil {
		return "", fmt.Errorf("search: %w", err)
	}
	defer osRoot.Close()
	s := &searcher{
		hidden:  func(p string) bool { return t.root.isHidden(filepath.Join(t.root.dir, p)) },
		fsys:    osRoot.FS(),
		root:    osRoot,
		match:   match,
		literal: literal,
		glob:    args.Glob,
	}
	if !args.IncludeIgnored {
		s.skipDirs = skippedDirs
		// A file given explicitly is searched even when ignored, as
		// ripgrep does, and so is everything in a directory given so.
		if info, err := osRoot.Stat(rel); err == nil && info.IsDir() {
			s.ignore = loadIgnoreRules(t.root, osRoot, rel)
			if s.ignore != nil && s.ignore.ignored(rel, true) {
				s.ignore = nil
			}
		}
	}
	if err := s.walk(ctx, rel); err != nil {
		return "", fmt.Errorf("search: %w", err)
	}
	if s.total == 0 {
		msg := fmt.Sprintf("no matches for %q in %s", args.Pattern, args.Path)
		if s.skippedLarge > 0 {
			msg += fmt.Sprintf(" (%s over 2 MB skipped)", termtext.Plural(s.skippedLarge, "file", "files"))
		}
		if s.skippedIgnored > 0 {
			msg += fmt.Sprintf(" (%s ignored by .gitignore not searched; set include_ignored to search them)", termtext.Plural(s.skippedIgnored, "path", "paths"))
		}
		return msg, nil
	}
	if more := s.total - s.shown; more > 0 {
		fmt.Fprintf(&s.out, "[%d more matches not shown; narrow the search with path or glob]\n", more)
	}
	if s.skippedLarge > 0 {
		fmt.Fprintf(&s.out, "[%s over 2 MB skipped]\n", termtext.Plural(s.skippedLarge, "file", "files"))
	}
	return validText(strings.TrimSuffix(s.out.String(), "\n")), nil
}

type searcher struct {
	hidden  func(rel string) bool // ask's own files, never searched
	fsys    fs.FS
	root    *os.Root // fsys's root, which files are opened through
	match   func([]byte) bool
	literal []byte // non-nil for a literal search: lets whole files be skipped fast
	glob    string
	// skipDirs are directory names never entered; ignore, when not nil,
	// are the repository's ignore rules.
	skipDirs map[string]bool
	ignore   *ignoreRules

	out            strings.Builder
	content        bytes.Buffer // reused for every file
	scratch        []byte
	total, shown   int
	skippedLarge   int
	skippedIgnored int
	wroteGroup     bool
}

func (s *searcher) walk(ctx context.Context, start string) error {
	return fs.WalkDir(s.fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return nil // unreadable subdirectory: skip it, keep searching
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if s.hidden(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p == start {
				if s.ignore != nil {
					s.ignore.loadDir(s.root, p)
				}
				return nil
			}
			if vcsDirs[d.Name()] || s.skipDirs[d.Name()] {
				return fs.SkipDir
			}
			if s.ignore != nil {
				if s.ignore.ignored(p, true) {
					s.skippedIgnored++
					return fs.SkipDir
				}
				s.ignore.loadDir(s.root, p)
			}
			return nil
		}
		if !d.Type().IsRegular() { // symlinks, sockets, devices
			return nil
		}
		if s.ignore != nil && s.ignore.ignored(p, false) {
			s.skippedIgnored++
			return nil
		}
		if s.glob != "" && !globMatch(s.glob, p) {
			return nil
		}
		s.searchFile(p, d)
		return nil
	})
}

// globMatch matches a glob without "/" against the file name, and one with
// "/" against the path from the working directory.
func globMatch(glob, p string) bool {
	target := path.Base(p)
	if strings.Contains(glob, "/") {
		target = p
	}
	ok, _ := path.Match(glob, target)
	return ok
}

func (s *searcher) searchFile(p string, d fs.DirEntry) {
	info, err := d.Info()
	if err != nil {
		return
	}
	if info.Size() > searchMaxFileSize {
		s.skippedLarge++
		return
	}
	// The walk saw a regular file, but a FIFO may have taken its place.
	f, info, err := noblock.OpenIn(s.root, p)
	if err != nil {
		return
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return
	}
	s.content.Reset()
	_, err = s.content.ReadFrom(io.LimitReader(f, searchMaxFileSize))
	f.Close()
	if err != nil {
		return
	}
	data := s.content.Bytes()
	if looksBinary(data) {
		return
	}
	if s.literal != nil && !bytes.Contains(data, s.literal) {
		return
	}
	name := filepath.ToSlash(p)
	lastWritten := 0      // line number of the last line written for this file
	contextAfter := false // the next line is the context of a shown match
	var prev []byte
	for lineNo := 1; len(data) > 0; lineNo++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if s.match(line) {
			s.total++
			if s.shown < searchMaxMatches {
				s.shown++
				needBefore := lineNo > 1 && lastWritten < lineNo-1
				first := lineNo
				if needBefore {
					first--
				}
				if lastWritten == 0 || first > lastWritten+1 {
					s.separate()
				}
				if needBefore {
					s.writeLine(name, lineNo-1, '-', prev)
				}
				s.writeLine(name, lineNo, ':', line)
				lastWritten, contextAfter = lineNo, true
				prev = line
				continue
			}
		}
		if contextAfter {
			s.writeLine(name, lineNo, '-', line)
			lastWritten, contextAfter = lineNo, false
		}
		prev = line
	}
}

// separate starts a new group of lines, as grep -C does with "--".
func (s *searcher) separate() {
	if s.wroteGroup {
		s.out.WriteString("--\n")
	}
	s.wroteGroup = true
}

// writeLine writes "file:N: text" for a match and "file:N- text" for
// context.
func (s *searcher) writeLine(name string, lineNo int, sep byte, line []byte) {
	s.out.WriteString(name)
	s.out.WriteByte(':')
	s.out.WriteString(strconv.Itoa(lineNo))
	s.out.WriteByte(sep)
	s.out.WriteByte(' ')
	s.scratch = appendLine(s.scratch[:0], line, len(line), searchMaxLineLen)
	s.out.Write(s.scratch)
	s.out.WriteByte('\n')
}
