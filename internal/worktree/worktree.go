// Package worktree gives a run a git worktree of its own (DESIGN §9,
// Worktrees): a new checkout at .git/ask-worktrees/NAME, on branch
// ask/NAME, so that the run never touches the person's own checkout. A
// worktree the run left unchanged is removed with its branch; a changed
// one is kept, for the person to review, merge or remove (ask worktree rm).
package worktree

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ask-cli/ask/internal/realpath"
)

// Dir is the directory, inside the repository's common git directory,
// that holds the worktrees ask makes.
const Dir = "ask-worktrees"

// BranchPrefix begins the branch of every worktree ask makes.
const BranchPrefix = "ask/"

// Auto is the name that asks for a fresh one (a bare --worktree).
const Auto = "auto"

// ErrUsage marks what the person asked for that cannot be done: a name
// that escapes, a base that names no commit, a directory outside git.
var ErrUsage = errors.New("worktree")

// Worktree is one worktree ask made for a run.
type Worktree struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Branch string `json:"branch"`
	// Base is the commit it was made from.
	Base string `json:"base"`
	// Workdir is the directory of the worktree that stands for the one
	// the run was asked to work in (the same place in the tree).
	Workdir string `json:"-"`
	// repo is a directory of the main checkout, where git is run to
	// remove it.
	repo string
}

// CheckName says what is wrong with a worktree name, "" when nothing is:
// it must be one path element that cannot escape .git/ask-worktrees, and
// ask/NAME must be a branch name git takes (git check-ref-format's rules).
func CheckName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case name == "." || name == "..":
		return "is not a name"
	case strings.ContainsAny(name, `/\`):
		return "holds a slash: give one name, not a path"
	case strings.HasPrefix(name, "-"):
		return "begins with a dash"
	case strings.HasPrefix(name, "."):
		return "begins with a dot"
	case strings.HasSuffix(name, "."), strings.HasSuffix(name, ".lock"):
		return "ends with a dot or .lock"
	case strings.Contains(name, ".."):
		return "holds .."
	case strings.Contains(name, "@{") || name == "@":
		return "holds @{ or is @"
	case len(name) > 200:
		return "is longer than 200 bytes"
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[", r) {
			return fmt.Sprintf("holds %q, which a branch name may not", r)
		}
	}
	return ""
}

// NewName is a fresh name: the time, and random letters so that runs
// started at once (ask batch) never meet.
func NewName(now time.Time) string {
	b := make([]byte, 3)
	rand.Read(b)
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// mu keeps one process's worktrees from being made or removed at once:
// git locks what it writes, and a batch's tasks would trip over the locks.
var mu sync.Mutex

// Create makes a worktree for a run in dir (a directory of a git
// checkout): NAME (Auto for a fresh one) on branch ask/NAME from base
// ("" for HEAD). The error wraps ErrUsage when the request cannot be done.
func Create(ctx context.Context, dir, name, base string) (*Worktree, error) {
	if name == Auto || name == "" {
		name = NewName(time.Now())
	}
	if why := CheckName(name); why != "" {
		return nil, fmt.Errorf("%w: the name %q %s", ErrUsage, name, why)
	}
	if _, err := git(ctx, dir, "check-ref-format", "refs/heads/"+BranchPrefix+name); err != nil {
		return nil, fmt.Errorf("%w: ask/%s is not a branch name git takes (git check-ref-format)", ErrUsage, name)
	}
	common, err := commonDir(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not in a git repository: %v", ErrUsage, dir, err)
	}
	if base == "" {
		base = "HEAD"
	}
	out, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%w: --worktree-base %q names no commit here", ErrUsage, base)
	}
	prefix, err := git(ctx, dir, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not in a git checkout: %v", ErrUsage, dir, err)
	}
	wt := &Worktree{Name: name, Path: filepath.Join(common, Dir, name), Branch: BranchPrefix + name,
		Base: strings.TrimSpace(string(out)), repo: dir}
	wt.Workdir = filepath.Join(wt.Path, strings.TrimSpace(string(prefix)))
	if _, err := os.Lstat(wt.Path); err == nil {
		return nil, fmt.Errorf("%w: %s exists already: choose another name, or ask worktree rm %s", ErrUsage, wt.Path, name)
	}
	mu.Lock()
	defer mu.Unlock()
	if _, err := git(ctx, dir, "worktree", "add", "--quiet", "-b", wt.Branch, "--", wt.Path, wt.Base); err != nil {
		return nil, fmt.Errorf("make the worktree: %w", err)
	}
	return wt, nil
}

// Changed reports whether the run changed the worktree: a file that
// differs from its base (or is new and not ignored), or a commit.
func (w *Worktree) Changed(ctx context.Context) (bool, error) {
	status, err := git(ctx, w.Path, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return false, err
	}
	head, err := git(ctx, w.Path, "rev-parse", "HEAD")
	if err != nil {
		return false, err
	}
	return len(bytes.TrimSpace(status)) > 0 || strings.TrimSpace(string(head)) != w.Base, nil
}

// Remove removes the worktree and its branch.
func (w *Worktree) Remove(ctx context.Context) error {
	return remove(ctx, w.repo, w.Path, w.Branch)
}

func remove(ctx context.Context, repo, path, branch string) error {
	mu.Lock()
	defer mu.Unlock()
	if _, err := git(ctx, repo, "worktree", "remove", "--force", "--force", "--", path); err != nil {
		return fmt.Errorf("remove the worktree %s: %w", path, err)
	}
	if _, err := git(ctx, repo, "branch", "-D", "--", branch); err != nil {
		return fmt.Errorf("delete the branch %s: %w", branch, err)
	}
	return nil
}

// List lists the worktrees ask made in the repository of dir.
func List(ctx context.Context, dir string) ([]Worktree, error) {
	common, err := commonDir(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not in a git repository: %v", ErrUsage, dir, err)
	}
	out, err := git(ctx, dir, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	root := filepath.Join(common, Dir) + string(filepath.Separator)
	var list []Worktree
	var cur Worktree
	for _, field := range strings.Split(string(out), "\x00") {
		key, value, _ := strings.Cut(field, " ")
		switch key {
		case "worktree":
			cur = Worktree{Path: value, repo: dir}
		case "HEAD":
			cur.Base = value // the commit checked out now
		case "branch":
			cur.Branch = strings.TrimPrefix(value, "refs/heads/")
		case "":
			if strings.HasPrefix(cur.Path, root) && strings.HasPrefix(cur.Branch, BranchPrefix) {
				cur.Name = strings.TrimPrefix(cur.Path, root)
				list = append(list, cur)
			}
			cur = Worktree{}
		}
	}
	return list, nil
}

// Remove removes the worktree ask made by that name in the repository of
// dir, with its branch; a name that is not one of them is an error
// wrapping ErrUsage.
func Remove(ctx context.Context, dir, name string) (Worktree, error) {
	if why := CheckName(name); why != "" {
		return Worktree{}, fmt.Errorf("%w: the name %q %s", ErrUsage, name, why)
	}
	list, err := List(ctx, dir)
	if err != nil {
		return Worktree{}, err
	}
	for _, w := range list {
		if w.Name == name {
			return w, remove(ctx, dir, w.Path, w.Branch)
		}
	}
	return Worktree{}, fmt.Errorf("%w: no worktree %q here (ask worktree list lists them)", ErrUsage, name)
}

// commonDir is the repository's common git directory (the main
// checkout's .git, also from inside a worktree), absolute.
func commonDir(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	return filepath.Clean(strings.TrimSpace(string(out))), nil
}

// gitTimeout bounds each git command.
const gitTimeout = 2 * time.Minute

// git runs git in dir and returns its stdout. It runs no program the
// repository's config or hooks name: making a worktree runs no
// post-checkout hook, and status no fsmonitor.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if msg != "" {
			return nil, fmt.Errorf("git %s: %w: %s", args[0], err, msg)
		}
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}

// Holds reports whether path is inside one of the worktrees ask made in
// the repository of dir: a place a run of that repository may be carried
// on in.
func Holds(ctx context.Context, dir, path string) bool {
	common, err := commonDir(ctx, dir)
	if err != nil {
		return false
	}
	// Links read, as far as the path exists: NAME -> / is under the
	// worktrees' directory as written, and leads out of it.
	root, real := realpath.Existing(filepath.Join(common, Dir)), realpath.Existing(filepath.Clean(path))
	rel, err := filepath.Rel(root, real)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}
