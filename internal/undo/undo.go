// Package undo reads what a run changed from its transcript, as one net
// change a file, and turns it into a patch (`ask log diff`) or puts the
// files back (`ask undo`), each only where that is known to be right.
package undo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/tools"
)

// File is what a run did to one file, from the state before its first
// change to the state after its last.
type File struct {
	Path string
	// Tool is the tool that changed it first.
	Tool string
	// Created: the file did not exist before the run. Deleted: it does
	// not after.
	Created, Deleted bool
	// Before is its content before the run, when a file tool recorded it
	// (HasBefore); FromGit when git has it instead (a tracked file a
	// command changed, clean when the run started); else Why says why
	// it is not known.
	Before    []byte
	HasBefore bool
	FromGit   bool
	Why       string
	// After is the content the run left, when recorded (HasAfter), and
	// AfterSHA256 its hash.
	After       []byte
	HasAfter    bool
	AfterSHA256 string
	// Omitted says why the last change recorded no content.
	Omitted string
}

// Run is a run's changes as its transcript tells them.
type Run struct {
	Workdir string
	Git     *records.GitState
	Files   []File
}

// FromEvents folds a transcript's file.changed events into one change a
// file, in the order the files were first changed. A file created and
// deleted again by the run is left out.
func FromEvents(events []records.Event) Run {
	var run Run
	// The repository as the run's first command found it is recorded in
	// run.finished (in run.started by earlier versions); every change is
	// judged by it.
	for _, ev := range events {
		if (ev.Type == records.TypeRunStarted || ev.Type == records.TypeRunFinished) && ev.Git != nil {
			run.Git = ev.Git
		}
	}
	index := map[string]int{}
	for _, ev := range events {
		switch ev.Type {
		case records.TypeRunStarted:
			if ev.Settings != nil {
				run.Workdir = ev.Settings.Workdir
			}
			continue
		case records.TypeFileChanged:
		default:
			continue
		}
		if ev.Change == nil || ev.Path == "" {
			continue
		}
		c := ev.Contents
		if c == nil {
			c = &records.Contents{}
		}
		i, seen := index[ev.Path]
		if !seen {
			index[ev.Path] = len(run.Files)
			run.Files = append(run.Files, run.first(*ev.Change, c))
			i = len(run.Files) - 1
		}
		f := &run.Files[i]
		f.Deleted = ev.Action == "deleted"
		f.After, f.HasAfter = c.AfterBytes()
		f.AfterSHA256, f.Omitted = c.AfterSHA256, c.Omitted
	}
	return Run{Workdir: run.Workdir, Git: run.Git, Files: slices.DeleteFunc(run.Files, func(f File) bool { return f.Created && f.Deleted })}
}

// first is what the first change of a file tells of it before the run.
func (run Run) first(ch records.Change, c *records.Contents) File {
	f := File{Path: ch.Path, Tool: ch.Tool}
	if ch.Action == "created" {
		f.Created = true
		return f
	}
	if f.Before, f.HasBefore = c.BeforeBytes(); f.HasBefore {
		return f
	}
	switch {
	case c.Omitted != "":
		f.Why = "its content before was not recorded: " + c.Omitted
	case ch.LinesAdded != nil && c.AfterSHA256 != "":
		f.Why = fmt.Sprintf("%s changed it, and it was larger than 1 MB: its content before was not recorded", ch.Tool)
	case ch.LinesAdded != nil:
		f.Why = "the run was recorded by an older ask, without the content before"
	case run.Git == nil:
		f.Why = fmt.Sprintf("%s changed it outside a git repository, and commands' changes are recorded without the content before", ch.Tool)
	case run.Git.Head == "":
		f.Why = fmt.Sprintf("%s changed it, and the repository had no commit to restore it from", ch.Tool)
	case slices.Contains(run.Git.Dirty, ch.Path):
		f.Why = fmt.Sprintf("%s changed it, and it had changes not committed when the run started: git cannot restore them", ch.Tool)
	default:
		f.FromGit = true
	}
	return f
}

// before is the file's content before the run (nil for a file created),
// with whether it is executable, or why it is not known.
func (run Run) before(ctx context.Context, f File) ([]byte, bool, error) {
	switch {
	case f.Created:
		return nil, false, nil
	case f.HasBefore:
		return f.Before, false, nil
	case f.FromGit:
		b, exec, err := gitBlob(ctx, run.Workdir, run.Git, f.Path)
		if errors.Is(err, errNotInGit) {
			return nil, false, fmt.Errorf("%s changed it, and it was not in git's last commit when the run started: its content before was not recorded", f.Tool)
		}
		if err != nil {
			return nil, false, fmt.Errorf("its content before is not in git: %w", err)
		}
		if b == nil {
			b = []byte{}
		}
		return b, exec, nil
	}
	return nil, false, errors.New(f.Why)
}

// Skipped is a file left out of a patch or left alone by undo, and why.
type Skipped struct {
	Path, Why string
}

// Patch writes the run's changes as a patch git apply takes, from the
// state before the run to the state it left; it returns the files it
// could not put in: too large, or with no content before.
func (run Run) Patch(ctx context.Context, w *bytes.Buffer) []Skipped {
	var skipped []Skipped
	for _, f := range run.Files {
		before, exec, err := run.before(ctx, f)
		if err != nil {
			skipped = append(skipped, Skipped{f.Path, err.Error()})
			continue
		}
		var after []byte
		if !f.Deleted {
			if !f.HasAfter {
				why := "it was larger than 1 MB after the run: its content was not recorded"
				if f.Omitted != "" {
					why = "its content after the run was not recorded: " + f.Omitted
				}
				skipped = append(skipped, Skipped{f.Path, why})
				continue
			}
			after = f.After
			if after == nil {
				after = []byte{}
			}
		}
		if f.Created && after == nil || before != nil && after != nil && bytes.Equal(before, after) {
			continue // no net change
		}
		FilePatch(w, f.Path, before, after, exec)
	}
	return skipped
}

// Outcome is what undo did to one file.
type Outcome struct {
	Path string `json:"path"`
	// Action is restored, removed, unchanged (already as before the
	// run) or left (left alone; Reason says why).
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
}

// String is the outcome as `ask undo` says it: "restored notes.txt",
// "left app.go: it has changed since the run"; the names and the reason
// escaped, so that they cannot drive a terminal.
func (o Outcome) String() string {
	line := o.Action + " " + termtext.Safe(o.Path)
	if o.Reason != "" {
		line += ": " + termtext.Safe(o.Reason)
	}
	return line
}

// Left counts the files left alone.
func Left(outcomes []Outcome) int {
	n := 0
	for _, o := range outcomes {
		if o.Action == "left" {
			n++
		}
	}
	return n
}

// Load reads the transcript of run id at path and folds its file
// changes. A run killed before its end is read as far as it got: its
// changes so far are what it did.
func Load(path, id string) (Run, error) {
	events, err := records.ReadFile(path)
	if len(events) == 0 {
		return Run{}, err
	}
	run := FromEvents(events)
	if run.Workdir == "" {
		return Run{}, fmt.Errorf("run %s does not record its working directory", id)
	}
	return run, nil
}

// Undo puts back each file the run changed that is still as the run left
// it: its content before, or, for a file the run created, no file.
func (run Run) Undo(ctx context.Context) ([]Outcome, error) {
	root, err := os.OpenRoot(run.Workdir)
	if err != nil {
		return nil, fmt.Errorf("open the run's working directory: %w", err)
	}
	defer root.Close()
	var out []Outcome
	for _, f := range run.Files {
		action, reason := run.undoFile(ctx, root, f)
		out = append(out, Outcome{Path: f.Path, Action: action, Reason: reason})
	}
	return out, nil
}

func (run Run) undoFile(ctx context.Context, root *os.Root, f File) (action, reason string) {
	cur, info, exists, err := current(root, f.Path)
	if err != nil {
		return "left", err.Error()
	}
	before, exec, beforeErr := run.before(ctx, f)
	if beforeErr == nil && (f.Created && !exists || !f.Created && exists && bytes.Equal(cur, before)) {
		return "unchanged", "already as before the run"
	}
	switch {
	case f.Deleted && exists:
		return "left", "the run deleted it, and it has been made again since"
	case !f.Deleted && !exists:
		return "left", "it has been deleted since the run"
	case !f.Deleted && f.AfterSHA256 == "":
		return "left", "the run was recorded by an older ask, without its content after: not known whether it changed since"
	case !f.Deleted && hash(cur) != f.AfterSHA256:
		return "left", "it has changed since the run"
	case beforeErr != nil:
		return "left", beforeErr.Error()
	case f.Created:
		if err := root.Remove(f.Path); err != nil {
			return "left", fmt.Sprintf("cannot remove it: %v", err)
		}
		return "removed", ""
	}
	perm := fs.FileMode(0o666)
	if exec {
		perm = 0o777
	}
	keep := false
	if exists {
		perm, keep = info.Mode().Perm(), true
	}
	if err := write(root, f.Path, before, perm, keep); err != nil {
		return "left", fmt.Sprintf("cannot write it: %v", err)
	}
	return "restored", ""
}

// current is the file's content now (exists false when there is none).
// Anything but a regular file is an error: undo leaves it alone.
func current(root *os.Root, rel string) ([]byte, fs.FileInfo, bool, error) {
	info, err := root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, false, nil
	case err != nil:
		return nil, nil, false, err
	case !info.Mode().IsRegular():
		return nil, nil, false, errors.New("it is no longer a regular file")
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return b, info, err == nil, err
}

func hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// write replaces rel with data as the file tools do, making its
// directories if they are gone.
func write(root *os.Root, rel string, data []byte, perm fs.FileMode, keepMode bool) error {
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o777); err != nil {
			return err
		}
	}
	return tools.WriteAtomic(root, rel, data, perm, keepMode)
}
