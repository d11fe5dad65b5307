package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/ask-cli/ask/internal/noblock"
	"github.com/ask-cli/ask/internal/termtext"
)

// editMaxFileSize bounds what edit_file loads into memory.
const editMaxFileSize = 16 << 20

type editFile struct{ root *Root }

func (editFile) Info() Info {
	return Info{
		Name:        "edit_file",
		Description: "Replace the first exact occurrence of old_text in a file with new_text. Copy old_text exactly from read_file output (without line numbers).",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","minLength":1},` +
			`"old_text":{"type":"string","minLength":1},` +
			`"new_text":{"type":"string"}},` +
			`"required":["path","old_text","new_text"]}`),
		Risk:             Write,
		RequiresApproval: true, // DESIGN §5: a change to a file is approved like a command
	}
}

func (t editFile) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Path    string `json:"path"`
		OldText string `json:"old_text"`
		NewText string `json:"new_text"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return "", err
	}
	if args.NewText == args.OldText {
		return "", errors.New("edit_file: old_text and new_text are the same; nothing to change")
	}
	oldText, newText := []byte(args.OldText), []byte(args.NewText)

	osRoot, rel, err := t.root.openRel(args.Path, false)
	if err != nil {
		return "", fmt.Errorf("edit_file: %w", err)
	}
	defer osRoot.Close()
	f, info, err := noblock.OpenIn(osRoot, rel)
	if err != nil {
		return "", fmt.Errorf("edit_file: %q: %w", args.Path, unwrapPathError(err))
	}
	defer f.Close()
	switch {
	case info.IsDir():
		return "", fmt.Errorf("edit_file: %q is a directory", args.Path)
	case !info.Mode().IsRegular():
		return "", fmt.Errorf("edit_file: %q is not a regular file", args.Path)
	case info.Size() > editMaxFileSize:
		return "", fmt.Errorf("edit_file: %q is larger than 16 MB; edit it with shell tools", args.Path)
	}
	content, err := io.ReadAll(io.LimitReader(f, editMaxFileSize+1))
	if err != nil {
		return "", fmt.Errorf("edit_file: %q: %w", args.Path, err)
	}
	if len(content) > editMaxFileSize { // it grew since fstat
		return "", fmt.Errorf("edit_file: %q is larger than 16 MB; edit it with shell tools", args.Path)
	}
	if text, ok, err := t.root.readText(ctx, rel); ok {
		if err != nil {
			return "", fmt.Errorf("edit_file: %q: the editor: %w", args.Path, err)
		}
		content = text
	}

	at := bytes.Index(content, oldText)
	if at < 0 && bytes.Contains(content, []byte("\r\n")) && !bytes.Contains(oldText, []byte("\r")) {
		// read_file shows CRLF files without "\r"; match them as shown.
		crlf := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }
		if i := bytes.Index(content, crlf(oldText)); i >= 0 {
			at, oldText, newText = i, crlf(oldText), crlf(newText)
		}
	}
	if at < 0 {
		return "", fmt.Errorf("edit_file: old_text was not found in %q; it must match the file exactly, including spaces, indentation and line breaks. Call read_file (or search) first and copy the exact text", args.Path)
	}
	updated := make([]byte, 0, len(content)-len(oldText)+len(newText))
	updated = append(updated, content[:at]...)
	updated = append(updated, newText...)
	updated = append(updated, content[at+len(oldText):]...)
	if err := t.root.writeText(ctx, osRoot, rel, updated, info.Mode().Perm(), true); err != nil {
		return "", fmt.Errorf("edit_file: %q: %w", args.Path, err)
	}
	added, removed := lineDelta(oldText, newText)
	t.root.changed(contentChange(Change{Path: rel, Action: "edited", Added: added, Removed: removed, Counted: true, Tool: "edit_file"}, content, true, updated))

	line := bytes.Count(content[:at], []byte{'\n'}) + 1
	msg := fmt.Sprintf("edited %s: replaced %s at line %d with %s",
		args.Path, termtext.Plural(lineCount(oldText), "line", "lines"), line, termtext.Plural(lineCount(newText), "line", "lines"))
	if others := bytes.Count(content[at+len(oldText):], oldText); others > 0 {
		msg += fmt.Sprintf("; %s left unchanged (include more surrounding text to pick another)",
			termtext.Plural(others, "later occurrence", "later occurrences"))
	}
	return msg, nil
}

// lineCount counts the lines a text spans (0 for empty text).
func lineCount(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	return bytes.Count(bytes.TrimSuffix(b, []byte{'\n'}), []byte{'\n'}) + 1
}

type writeFile struct{ root *Root }

func (writeFile) Info() Info {
	return Info{
		Name:        "write_file",
		Description: "Create or overwrite a file with content; parent directories are created.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","minLength":1},` +
			`"content":{"type":"string"}},` +
			`"required":["path","content"]}`),
		Risk:             Write,
		RequiresApproval: true,
	}
}

func (t writeFile) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return "", err
	}
	osRoot, rel, err := t.root.openRel(args.Path, true)
	if err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	defer osRoot.Close()

	perm, keepMode, verb := fs.FileMode(0o666), false, "created"
	var before []byte // what an overwrite replaces, for its line counts and undo
	existed := false
	switch info, err := osRoot.Stat(rel); {
	case err == nil && info.IsDir():
		return "", fmt.Errorf("write_file: %q is a directory", args.Path)
	case err == nil && !info.Mode().IsRegular():
		return "", fmt.Errorf("write_file: %q is not a regular file", args.Path)
	case err == nil:
		// The new content is a new file: it keeps who may read and write
		// it, but an executable mode it did not ask for would make a
		// model's text something that runs (a hook, a script on PATH).
		perm, keepMode, verb = info.Mode().Perm()&^0o111, true, "overwrote"
		if info.Size() <= editMaxFileSize {
			var err error
			before, err = osRoot.ReadFile(rel)
			existed = err == nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("write_file: %q: %w", args.Path, unwrapPathError(err))
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := osRoot.MkdirAll(dir, 0o777); err != nil {
			return "", fmt.Errorf("write_file: create directories for %q: %w", args.Path, unwrapPathError(err))
		}
	}
	data := []byte(args.Content)
	if err := t.root.writeText(ctx, osRoot, rel, data, perm, keepMode); err != nil {
		return "", fmt.Errorf("write_file: %q: %w", args.Path, err)
	}
	added, removed := lineDelta(before, data)
	t.root.changed(contentChange(Change{Path: rel, Action: verb, Added: added, Removed: removed, Counted: true, Tool: "write_file"}, before, existed, data))
	return fmt.Sprintf("%s %s: wrote %s", verb, args.Path, termtext.Plural(len(data), "byte", "bytes")), nil
}

// replacesMax bounds the file a write's approval question shows a change
// against; a larger one is shown as the new content alone.
const replacesMax = 1 << 20

// Replaces is the content of the file a call would overwrite, read as the
// write would resolve its path, so that the approval question can show the
// write as a change to it; ok is false for a new file, or one that cannot
// be read or is too large to show as a change.
func (t writeFile) Replaces(arguments string) (content string, ok bool) {
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal([]byte(arguments), &args) != nil || args.Path == "" {
		return "", false
	}
	osRoot, rel, err := t.root.openRel(args.Path, true) // as the write resolves it
	if err != nil {
		return "", false
	}
	defer osRoot.Close()
	f, info, err := noblock.OpenIn(osRoot, rel) // a FIFO planted there must not hang the question
	if err != nil {
		return "", false
	}
	defer f.Close()
	if !info.Mode().IsRegular() || info.Size() > replacesMax {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, replacesMax+1))
	if err != nil || len(b) > replacesMax {
		return "", false
	}
	return string(b), true
}

// WriteAtomic replaces rel by writing a temporary file next to it and
// renaming it over, so that a failure never leaves a half-written file
// (the file tools, and ask undo putting a file back).
// With keepMode the new file gets exactly perm; otherwise perm is filtered
// by the umask as for any new file.
func WriteAtomic(osRoot *os.Root, rel string, data []byte, perm fs.FileMode, keepMode bool) (err error) {
	tmp := filepath.Join(filepath.Dir(rel), fmt.Sprintf(".%s.ask-%016x.tmp", filepath.Base(rel), rand.Uint64()))
	f, err := osRoot.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return unwrapPathError(err)
	}
	defer func() {
		if err != nil {
			f.Close()
			osRoot.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if keepMode {
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := osRoot.Rename(tmp, rel); err != nil {
		return unwrapPathError(err)
	}
	return nil
}

// controlDirs are the directories where version control keeps what it
// runs: a write there (a hook, core.fsmonitor in .git/config) is code that
// runs at the next `git status`.
var controlDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".jj": true, ".bzr": true}

// WritesControl reports whether a call would write inside a version
// control directory of the working directory, with the path it would
// write, resolved as the write would resolve it.
func (t writeFile) WritesControl(arguments string) (string, bool) {
	return writesControl(t.root, arguments)
}

// WritesControl: see writeFile.WritesControl.
func (t editFile) WritesControl(arguments string) (string, bool) {
	return writesControl(t.root, arguments)
}

func writesControl(root *Root, arguments string) (string, bool) {
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal([]byte(arguments), &args) != nil || args.Path == "" {
		return "", false
	}
	real, err := root.ResolveForWrite(args.Path)
	if err != nil {
		return "", false // refused by the tool itself
	}
	rel := root.rel(real)
	for _, part := range strings.Split(rel, "/") {
		if controlDirs[part] {
			return rel, true
		}
	}
	if buildsGitDir(root, real) {
		return rel, true
	}
	return "", false
}

// buildsGitDir reports whether a write to real makes or changes a git
// directory outside .git: git takes any directory with a HEAD (and objects
// and refs) for one, and runs what its config says (core.fsmonitor) when
// asked about it, so `git status` there runs a model's config. A file named
// HEAD is the piece no project needs; a write anywhere under a directory
// that has one is a write into that git directory.
func buildsGitDir(root *Root, real string) bool {
	if strings.EqualFold(filepath.Base(real), "HEAD") { // one file on a case-insensitive disk
		return true
	}
	for dir := filepath.Dir(real); root.contains(dir); dir = filepath.Dir(dir) {
		if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err == nil {
			return true
		}
		if dir == root.dir {
			break
		}
	}
	return false
}
