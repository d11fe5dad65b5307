// Package demo holds ask's built-in offline demo: a session recorded against
// a scripted model, and the small project its tools act on. `ask replay`
// with no file replays it through the real loop, running the real tools in a
// fresh copy of the project.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed testdata/session.jsonl
var session []byte

//go:embed testdata/project
var project embed.FS

// Transcript returns the recorded demo session.
func Transcript() []byte { return session }

// Extract writes the demo project into dir.
func Extract(dir string) error {
	sub, err := fs.Sub(project, "testdata/project")
	if err != nil {
		return err
	}
	return fs.WalkDir(sub, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, path)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(sub, path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// Workspace makes a fresh copy of the demo project in a temporary
// directory, for the demo to act on; cleanup removes it.
func Workspace() (dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", "ask-demo-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	if err := Extract(dir); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("demo: %w", err)
	}
	return dir, cleanup, nil
}
