package undo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/records"
)

// gitTimeout bounds each git command: a run's start must not wait long
// for a repository that is huge or on a slow disk.
const gitTimeout = 5 * time.Second

// git runs git in dir and returns its stdout. It runs no program the
// repository's config names (core.fsmonitor) and takes no lock a user's
// own git command could trip over.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.fsmonitor=false", "-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg != "" {
			return nil, fmt.Errorf("git %s: %w: %s", args[0], err, msg)
		}
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}

// GitStateOf is the repository dir is in, as undo needs it: the commit
// checked out and the tracked files under dir that differ from it. It is
// nil, with no error, when dir is in no repository or git is not
// installed.
func GitStateOf(ctx context.Context, dir string) (*records.GitState, error) {
	if _, err := exec.LookPath("git"); err != nil || !mayBeInRepository(dir) {
		return nil, nil
	}
	// Which commit and where in it, and what differs from it, are asked
	// at once: a run's first command waits for both. One more process
	// tells a repository with no commit from no repository.
	var status []byte
	var statusErr error
	statusDone := make(chan struct{})
	go func() {
		defer close(statusDone)
		status, statusErr = git(ctx, dir, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--no-renames", "--ignore-submodules=all", "--", ".")
	}()
	out, err := git(ctx, dir, "rev-parse", "--is-inside-work-tree", "--show-prefix", "HEAD")
	if err != nil {
		out, err = git(ctx, dir, "rev-parse", "--is-inside-work-tree", "--show-prefix")
	}
	<-statusDone
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if err != nil || len(lines) < 2 || lines[0] != "true" {
		return nil, nil // not a repository (or its .git directory itself)
	}
	st := &records.GitState{Prefix: lines[1]}
	if len(lines) == 3 {
		st.Head = lines[2]
	}
	if statusErr != nil {
		return nil, statusErr
	}
	out = status
	st.Dirty = []string{}
	for _, entry := range bytes.Split(out, []byte{0}) {
		if len(entry) < 4 {
			continue
		}
		// "XY path", the path from the top of the repository.
		if p, ok := strings.CutPrefix(string(entry[3:]), st.Prefix); ok {
			st.Dirty = append(st.Dirty, p)
		}
	}
	return st, nil
}

// mayBeInRepository reports whether git could find a repository from dir:
// a .git in dir or a directory above it (git looks from the real path), or
// GIT_DIR naming one. Outside any, a run's first command starts no git.
func mayBeInRepository(dir string) bool {
	if os.Getenv("GIT_DIR") != "" {
		return true
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return true // let git say
	}
	for d := real; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// errNotInGit is a file git cannot give back: not in the commit.
var errNotInGit = errors.New("not in git at the run's start")

// gitBlob is a tracked file's content in commit head, with whether it is
// executable; rel is relative to the working directory dir.
func gitBlob(ctx context.Context, dir string, st *records.GitState, rel string) ([]byte, bool, error) {
	out, err := git(ctx, dir, "ls-tree", "-z", "--full-tree", st.Head, "--", st.Prefix+rel)
	if err != nil {
		return nil, false, err
	}
	// "mode type id\tpath"
	fields := strings.Fields(strings.SplitN(string(out), "\t", 2)[0])
	switch {
	case len(fields) != 3 || fields[1] != "blob":
		return nil, false, errNotInGit
	case fields[0] == "120000":
		return nil, false, errors.New("a symbolic link in git, not restored")
	}
	blob, err := git(ctx, dir, "cat-file", "blob", fields[2])
	if err != nil {
		return nil, false, err
	}
	return blob, fields[0] == "100755", nil
}
