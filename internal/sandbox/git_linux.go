package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// gitWrites are the names git writes at the top of a git directory in
// ordinary work (add, commit, stash, checkout, merge, rebase, cherry-pick,
// fetch): its index, its refs and objects, and the state of an operation
// under way. None of them is configuration, a hook or a pointer to another
// git directory, which is what a command must never plant there (config,
// config.worktree, commondir, gitdir, hooks, info, ...).
var gitWrites = []string{
	"index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "AUTO_MERGE",
	"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR", "MERGE_AUTOSTASH",
	"CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "COMMIT_EDITMSG", "SQUASH_MSG",
	"packed-refs", "objects", "refs", "logs", "rr-cache",
	"rebase-merge", "rebase-apply", "sequencer", "gc.pid", "gc.log",
	// The linked worktrees' git directories, which `git worktree add` (or
	// another ask's --worktree) may make while a command runs: a new one is
	// used only by a worktree whose .git file names it.
	"worktrees",
}

// gitWritePrefixes begin the names of git's temporary index files: a
// stash's, a commit of some paths', a split index's.
var gitWritePrefixes = []string{"index.stash.", "next-index-", "sharedindex."}

// gitMayWrite reports whether git writes name at the top of a git
// directory in ordinary work: one of gitWrites, the lock file of one of
// them, or a temporary index. config.lock is not: no ordinary work changes
// the configuration.
func gitMayWrite(name string) bool {
	if slices.Contains(gitWrites, strings.TrimSuffix(name, ".lock")) {
		return true
	}
	for _, p := range gitWritePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// gitDir is a git directory in the working directory, or a directory
// holding submodules' (.git/modules), as the sandbox found it before the
// command ran: the names at its top level.
type gitDir struct {
	Path  string   `json:"path"`
	Names []string `json:"names"`
	// Git is set for a git directory, where git may add the names it
	// writes in ordinary work; a container keeps the names it had.
	Git bool `json:"git,omitempty"`
}

// gitDirs are the git directories of the working directory's repository:
// .git, every submodule's under .git/modules and every worktree's under
// .git/worktrees, and the directories holding them, found before the
// command runs.
func gitDirs(workdir string) []gitDir {
	dotgit := filepath.Join(workdir, ".git")
	if info, err := os.Lstat(dotgit); err != nil || !info.IsDir() {
		return nil
	}
	var out []gitDir
	var repo, modules func(dir string)
	repo = func(dir string) {
		out = append(out, gitDir{Path: dir, Names: names(dir), Git: true})
		if d := filepath.Join(dir, "worktrees"); isDir(d) {
			for _, w := range subdirs(d) {
				repo(filepath.Join(d, w))
			}
		}
		if d := filepath.Join(dir, "modules"); isDir(d) {
			modules(d)
		}
	}
	// A module's name may hold slashes (a/b): a directory under
	// .git/modules with what a git directory holds is one, another a level
	// of a name.
	modules = func(dir string) {
		out = append(out, gitDir{Path: dir, Names: names(dir)})
		for _, m := range subdirs(dir) {
			sub := filepath.Join(dir, m)
			if looksLikeGitDir(sub) {
				repo(sub)
			} else {
				modules(sub)
			}
		}
	}
	repo(dotgit)
	return out
}

// prepareGit makes a git directory's missing hooks directory, which the
// command could otherwise make and fill.
func prepareGit(workdir string) {
	if dotgit := filepath.Join(workdir, ".git"); isDir(dotgit) {
		os.Mkdir(filepath.Join(dotgit, "hooks"), 0o755)
	}
}

func looksLikeGitDir(dir string) bool {
	for _, n := range []string{"HEAD", "config", "objects", "refs", "hooks"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

func isDir(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.IsDir()
}

// names are the names in dir.
func names(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// subdirs are the names of the directories (not links) in dir.
func subdirs(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// protectGitDirs pins each git directory (and container of them) in place,
// writable, and binds read-only every entry git does not write in
// ordinary work: config, hooks, info, a worktree's commondir and gitdir,
// description and whatever else was there. A name that was not there
// cannot be kept out by a mount; sweepGitDirs removes it when the command
// has ended.
func protectGitDirs(dirs []gitDir) error {
	for _, d := range dirs {
		if err := unix.Mount(d.Path, d.Path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("cannot bind %s: %w", d.Path, err)
		}
	}
	contained := map[string]bool{}
	for _, d := range dirs {
		contained[d.Path] = true
	}
	for _, d := range dirs {
		if !d.Git {
			continue
		}
		for _, name := range d.Names {
			path := filepath.Join(d.Path, name)
			if gitMayWrite(name) || contained[path] {
				continue
			}
			if info, err := os.Lstat(path); err != nil || info.Mode()&os.ModeSymlink != 0 {
				// A link is bound where it points, not where it is: it
				// stays, as a name the sweep leaves alone.
				continue
			}
			if err := readOnly(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// sweepGitDirs removes, once every process of the command has ended, what
// appeared at the top of a git directory that git does not write in
// ordinary work (a commondir pointing at a planted configuration, a
// config.worktree, an info directory), and every new entry of a container
// of git directories. It tells say what it removed.
func sweepGitDirs(dirs []gitDir, say func(string)) {
	for _, d := range dirs {
		for _, name := range names(d.Path) {
			if slices.Contains(d.Names, name) || d.Git && gitMayWrite(name) {
				continue
			}
			path := filepath.Join(d.Path, name)
			if err := os.RemoveAll(path); err != nil {
				say(fmt.Sprintf("ask: the sandbox could not remove %s, which git does not write in ordinary work: %v", path, err))
				continue
			}
			say(fmt.Sprintf("ask: the sandbox removed %s: git does not write it in ordinary work, and it may make git run a command", path))
		}
	}
}
