package tools

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/ask-cli/ask/internal/noblock"
)

// maxIgnoreFileSize bounds what is read of one ignore file; a real one is a
// few kilobytes.
const maxIgnoreFileSize = 1 << 20

// ignoreRules are the ignore files of the git repository holding the working
// directory, read as ripgrep reads them: .git/info/exclude, then every
// .gitignore from the repository's top down to the directory searched, then
// the ones found while walking. Outside a repository there are none, as with
// ripgrep.
type ignoreRules struct {
	prefix   []string // the working directory's path from the repository's top
	patterns []gitignore.Pattern
}

// loadIgnoreRules reads the rules that apply above start, a directory
// relative to the root, or returns nil when the root is not in a repository.
// Ignore files above the root are read from the file system directly: they
// only decide what is skipped, and none of their text reaches the model.
func loadIgnoreRules(r *Root, osRoot *os.Root, start string) *ignoreRules {
	top, gitPath, ok := repositoryTop(r.dir)
	if !ok {
		return nil
	}
	rules := &ignoreRules{}
	if rel, err := filepath.Rel(top, r.dir); err == nil && rel != "." {
		rules.prefix = strings.Split(filepath.ToSlash(rel), "/")
	}
	if gitDir, ok := gitDirectory(gitPath); ok {
		rules.add(readLimited(filepath.Join(gitDir, "info", "exclude")), nil)
	}
	dir := top
	for i := 0; i < len(rules.prefix); i++ {
		rules.add(readLimited(filepath.Join(dir, ".gitignore")), rules.prefix[:i])
		dir = filepath.Join(dir, rules.prefix[i])
	}
	// The root and its subdirectories down to start, but not start itself:
	// the walk reads the .gitignore of every directory it enters.
	if start != "." {
		parts := strings.Split(start, "/")
		for i := range parts {
			rules.loadDir(osRoot, strings.Join(parts[:i], "/"))
		}
	}
	return rules
}

// loadDir adds the .gitignore of dir, relative to the root, if it has one.
func (ir *ignoreRules) loadDir(osRoot *os.Root, dir string) {
	if dir == "" {
		dir = "."
	}
	f, info, err := noblock.OpenIn(osRoot, joinRel(dir, ".gitignore"))
	if err != nil {
		return
	}
	defer f.Close()
	if !info.Mode().IsRegular() {
		return
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxIgnoreFileSize)); err != nil {
		return
	}
	ir.add(buf.Bytes(), ir.domain(dir))
}

// ignored reports whether git would ignore p, a path relative to the root.
func (ir *ignoreRules) ignored(p string, isDir bool) bool {
	if p == "." || p == "" {
		return false
	}
	path := append(append([]string(nil), ir.prefix...), strings.Split(p, "/")...)
	return gitignore.NewMatcher(ir.patterns).Match(path, isDir)
}

// domain is dir's path from the repository's top, as the patterns of its
// .gitignore are scoped to it.
func (ir *ignoreRules) domain(dir string) []string {
	d := append([]string(nil), ir.prefix...)
	if dir != "." && dir != "" {
		d = append(d, strings.Split(dir, "/")...)
	}
	return d
}

// add parses the lines of an ignore file whose patterns apply below domain.
// Later patterns win over earlier ones, so deeper files are added last.
func (ir *ignoreRules) add(content []byte, domain []string) {
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(nil, maxIgnoreFileSize)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ir.patterns = append(ir.patterns, gitignore.ParsePattern(line, domain))
	}
}

// repositoryTop finds the nearest directory at or above dir holding .git,
// and returns it with the path of that .git.
func repositoryTop(dir string) (top, gitPath string, ok bool) {
	for {
		p := filepath.Join(dir, ".git")
		if _, err := os.Lstat(p); err == nil {
			return dir, p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", false
		}
		dir = parent
	}
}

// gitDirectory returns the directory holding info/exclude: .git itself, or
// for a linked worktree (a .git file saying "gitdir: …") the repository's
// common directory.
func gitDirectory(gitPath string) (string, bool) {
	info, err := os.Stat(gitPath)
	if err != nil {
		return "", false
	}
	if info.IsDir() {
		return gitPath, true
	}
	content := strings.TrimSpace(string(readLimited(gitPath)))
	dir, ok := strings.CutPrefix(content, "gitdir:")
	if !ok {
		return "", false
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(gitPath), dir)
	}
	if common := strings.TrimSpace(string(readLimited(filepath.Join(dir, "commondir")))); common != "" {
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		return common, true
	}
	return dir, true
}

// readLimited reads a small regular file outside the root, or nothing.
func readLimited(p string) []byte {
	info, err := os.Stat(p)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxIgnoreFileSize {
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	return data
}
