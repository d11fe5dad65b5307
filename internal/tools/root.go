package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ask-cli/ask/internal/realpath"
	"github.com/ask-cli/ask/internal/sandbox"
)

// ErrOutsideRoot is wrapped by every refusal of a path that leads outside the
// working directory, so that callers can tell a confinement refusal from an
// ordinary I/O error.
var ErrOutsideRoot = errors.New("path is outside the working directory")

// ErrInvalidPath is wrapped when a path cannot be used at all (empty, NUL
// bytes, a kernel pseudo-filesystem, a symlink loop).
var ErrInvalidPath = errors.New("invalid path")

// maxPathLen is Linux's PATH_MAX; longer paths cannot be opened anyway.
const maxPathLen = 4096

// specialTrees are kernel pseudo-filesystems: reading them can block forever,
// leak process state or return endless data, so file tools refuse them even
// when the root would contain them (e.g. --workdir /).
var specialTrees = []string{"/proc", "/dev", "/sys"}

// Root is the directory the file tools are confined to (--workdir). Every
// path argument is resolved against it and must, after following every
// symlink, stay inside it.
type Root struct {
	dir string // absolute, symlink-free
	// hidden are paths inside the root that the file tools must not reach,
	// read or write: ask's own state, config and transcript, which a model
	// running in $HOME could otherwise rewrite to steer the next run.
	hidden []string
	// scrub are variables kept from child processes (Scrub); with
	// keepOnly, only build variables and keep reach them (KeepOnly).
	scrub    []string
	keepOnly bool
	keep     []string
	// Environ is the environment child processes start from; nil is
	// os.Environ.
	Environ func() []string
	// onChange hears of every file a tool changes (OnChange).
	onChange func(Change)
	// watch finds what watched calls change (Watch); onWatchProblem hears
	// when it must scan rather than be told by the kernel.
	watchMu        sync.Mutex // guards watch and pictureSoon
	watch          *watcher
	pictureSoon    *time.Timer   // StartWatching's, until it fires
	pictureGrace   time.Duration // tests: 0 is pictureGrace
	onWatchProblem func(string)
	watchKernel    func(*Root, *sync.Mutex) (kernelWatch, error) // nil: newKernelWatch; tests replace it
	pictureDir     func(rel string)                              // tests: called as the picture reads each directory
	// Sandbox confines every process the tools start (the shell tool,
	// user tools); nil confines nothing.
	Sandbox *sandbox.Sandbox
	// Editor, where set, reads and writes the file tools' text through an
	// editor (ask acp), after the root has confined the path.
	Editor EditorFiles
}

// EditorFiles are an editor's own reads and writes of text files, which
// see its unsaved buffers and let it show and undo the change. Each takes
// an absolute path the root has already confined; a nil one is the disk.
type EditorFiles struct {
	Read  func(ctx context.Context, path string) (string, error)
	Write func(ctx context.Context, path, content string) error
}

// readText is the text of the file rel, from the editor where it reads
// files; ok is false where the disk's is wanted.
func (r *Root) readText(ctx context.Context, rel string) (text []byte, ok bool, err error) {
	if r.Editor.Read == nil {
		return nil, false, nil
	}
	s, err := r.Editor.Read(ctx, filepath.Join(r.dir, rel))
	return []byte(s), true, err
}

// writeText writes data to rel through the editor where it writes files,
// else atomically on disk.
func (r *Root) writeText(ctx context.Context, osRoot *os.Root, rel string, data []byte, perm fs.FileMode, keepMode bool) error {
	if r.Editor.Write != nil {
		return r.Editor.Write(ctx, filepath.Join(r.dir, rel), string(data))
	}
	return WriteAtomic(osRoot, rel, data, perm, keepMode)
}

// Hide puts paths beyond the file tools' reach, whether they exist yet
// or not; symlinks in them are resolved as far as they exist.
func (r *Root) Hide(paths ...string) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		r.hidden = append(r.hidden, realpath.Existing(abs))
	}
}

// isHidden reports whether a resolved path is, or is inside, a hidden one.
func (r *Root) isHidden(real string) bool {
	for _, h := range r.hidden {
		if within(real, h) {
			return true
		}
	}
	return false
}

// hidesWithin reports whether a hidden path lies in the directory abs, or
// abs in one.
func (r *Root) hidesWithin(abs string) bool {
	for _, h := range r.hidden {
		if within(h, abs) || within(abs, h) {
			return true
		}
	}
	return false
}

// ErrHidden is wrapped by a refusal of ask's own files.
var ErrHidden = errors.New("the file is ask's own and out of the tools' reach")

// NewRoot makes dir absolute, resolves its symlinks and checks that it is a
// directory.
func NewRoot(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("working directory %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("working directory %q is not a directory", dir)
	}
	return &Root{dir: real}, nil
}

// sandboxed reports whether the processes tools start here are confined.
func (r *Root) sandboxed() bool {
	return r != nil && r.Sandbox.Active() && r.Sandbox.Problem() == ""
}

// Dir returns the root's absolute, symlink-resolved path.
func (r *Root) Dir() string { return r.dir }

// Resolve returns the real path of an existing file or directory inside the
// root. Relative paths are relative to the root; absolute paths are accepted
// when they lead inside it.
func (r *Root) Resolve(path string) (string, error) {
	abs, err := r.absolute(path)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		if err := r.check(path, real); err != nil {
			return "", err
		}
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", r.invalid(path, err)
	}
	// Say "outside" rather than "does not exist" when the path leads out, so
	// that nothing is learnt about files beyond the root.
	if _, werr := r.ResolveForWrite(path); werr != nil {
		return "", werr
	}
	return "", fmt.Errorf("%q does not exist in the working directory: %w", path, fs.ErrNotExist)
}

// ResolveForWrite returns the real path a file may be created at: the deepest
// existing ancestor is resolved (symlinks followed) and must lie inside the
// root; the missing components are appended to it. A broken symlink on the
// way is refused, since writing through it could create a file anywhere.
func (r *Root) ResolveForWrite(path string) (string, error) {
	abs, err := r.absolute(path)
	if err != nil {
		return "", err
	}
	var missing []string // innermost first
	cur := abs
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			if err := r.check(path, real); err != nil {
				return "", err
			}
			if len(missing) == 0 {
				return real, nil
			}
			if info, err := os.Stat(real); err != nil || !info.IsDir() {
				return "", fmt.Errorf("%q: %s is not a directory: %w", path, r.rel(real), ErrInvalidPath)
			}
			out := real
			for i := len(missing) - 1; i >= 0; i-- {
				out = filepath.Join(out, missing[i])
			}
			if err := r.check(path, out); err != nil {
				return "", err
			}
			return out, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", r.invalid(path, err)
		}
		if _, lerr := os.Lstat(cur); lerr == nil {
			// It exists but cannot be resolved: a dangling symlink.
			return "", fmt.Errorf("%q: %s is a symbolic link to a missing target: %w", path, cur, ErrInvalidPath)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", r.invalid(path, err)
		}
		missing = append(missing, filepath.Base(cur))
		cur = parent
	}
}

// absolute validates the spelling of path and makes it absolute and clean.
func (r *Root) absolute(path string) (string, error) {
	switch {
	case path == "":
		return "", fmt.Errorf("empty path: %w; give a path relative to the working directory, e.g. \".\"", ErrInvalidPath)
	case strings.IndexByte(path, 0) >= 0:
		return "", fmt.Errorf("%q contains a NUL byte: %w", path, ErrInvalidPath)
	case len(path) > maxPathLen:
		return "", fmt.Errorf("path of %d bytes: %w: longer than %d bytes", len(path), ErrInvalidPath, maxPathLen)
	}
	var abs string
	if filepath.IsAbs(path) {
		abs = filepath.Clean(path)
	} else {
		abs = filepath.Join(r.dir, path)
	}
	if r.special(abs) {
		return "", r.specialErr(path)
	}
	return abs, nil
}

// check accepts a resolved path only inside the root and outside the
// kernel pseudo-filesystems.
func (r *Root) check(path, real string) error {
	if r.isHidden(real) {
		return fmt.Errorf("%q: %w", path, ErrHidden)
	}
	if !r.contains(real) {
		return fmt.Errorf("%q: %w %s; only paths inside it are allowed (relative paths are resolved against it, symlinks must not lead out)", path, ErrOutsideRoot, r.dir)
	}
	if r.special(real) {
		return r.specialErr(path)
	}
	return nil
}

func (r *Root) contains(real string) bool {
	if real == r.dir {
		return true
	}
	prefix := r.dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(real, prefix)
}

// special reports whether p lies in a pseudo-filesystem that the root itself
// is not part of (a root under /dev/shm may still use its own files).
func (r *Root) special(p string) bool {
	for _, tree := range specialTrees {
		if within(p, tree) && !within(r.dir, tree) {
			return true
		}
	}
	return false
}

func within(p, tree string) bool {
	return p == tree || strings.HasPrefix(p, tree+"/")
}

func (r *Root) specialErr(path string) error {
	return fmt.Errorf("%q: %w: /proc, /dev and /sys are not accessible; only files inside the working directory %s are allowed", path, ErrInvalidPath, r.dir)
}

func (r *Root) invalid(path string, err error) error {
	return fmt.Errorf("%q: %w: %v", path, ErrInvalidPath, unwrapPathError(err))
}

// unwrapPathError drops the *PathError wrapper, whose message repeats an
// absolute path the model never wrote.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// rel returns real relative to the root for messages ("." for the root).
func (r *Root) rel(real string) string {
	rel, err := filepath.Rel(r.dir, real)
	if err != nil {
		return real
	}
	return filepath.ToSlash(rel)
}

// openRoot opens the root as an *os.Root. File tools open their resolved
// paths through it, so that a symlink swapped in after Resolve cannot lead
// the open itself outside the root.
func (r *Root) openRoot() (*os.Root, error) {
	return os.OpenRoot(r.dir)
}

// openRel resolves path and returns the open os.Root with the path relative
// to it. The caller closes the os.Root.
func (r *Root) openRel(path string, forWrite bool) (*os.Root, string, error) {
	resolve := r.Resolve
	if forWrite {
		resolve = r.ResolveForWrite
	}
	real, err := resolve(path)
	if err != nil {
		return nil, "", err
	}
	osRoot, err := r.openRoot()
	if err != nil {
		return nil, "", fmt.Errorf("open working directory: %w", err)
	}
	return osRoot, r.rel(real), nil
}
