package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// confinedTree builds, in a temporary directory:
//
//	root/                      the working directory
//	  in.txt, sub/f.txt
//	  link_in -> sub           symlinks that stay inside
//	  link_in_abs -> <root>/sub/f.txt
//	  link_out -> ../outside   symlinks that lead out, directly or by chains
//	  link_out_abs -> <outside>/secret.txt
//	  chain1 -> chain2 -> link_out
//	  link_parent -> ..
//	  sub/up -> ../../outside
//	  dangling_out -> <base>/nowhere/x
//	  loop1 -> loop2 -> loop1
//	outside/secret.txt         what must never be reached
func confinedTree(t testing.TB) (root *Root, base string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{dir, outside, filepath.Join(dir, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(dir, "in.txt"):         "inside\n",
		filepath.Join(dir, "sub", "f.txt"):   "f\n",
		filepath.Join(outside, "secret.txt"): "secret\n",
	}
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := []struct{ name, target string }{
		{"link_in", "sub"},
		{"link_in_abs", filepath.Join(dir, "sub", "f.txt")},
		{"link_out", "../outside"},
		{"link_out_abs", filepath.Join(outside, "secret.txt")},
		{"chain2", "link_out"},
		{"chain1", "chain2"},
		{"link_parent", ".."},
		{"sub/up", "../../outside"},
		{"dangling_out", filepath.Join(base, "nowhere", "x")},
		{"loop1", "loop2"},
		{"loop2", "loop1"},
	}
	for _, l := range links {
		if err := os.Symlink(l.target, filepath.Join(dir, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	root, err = NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return root, base
}

// escapeCorpus holds paths that must be refused by both Resolve and
// ResolveForWrite; {base} is replaced by the temporary directory and
// {root} by the root.
var escapeCorpus = []struct {
	path string
	want error
}{
	{"..", ErrOutsideRoot},
	{"../outside/secret.txt", ErrOutsideRoot},
	{"./../outside/secret.txt", ErrOutsideRoot},
	{"sub/../../outside/secret.txt", ErrOutsideRoot},
	{"sub/./../../outside/secret.txt", ErrOutsideRoot},
	{"../../../../../../../../etc/passwd", ErrOutsideRoot},
	{"../nonexistent", ErrOutsideRoot},
	{"../outside/nonexistent/deeper", ErrOutsideRoot},
	{"/etc/passwd", ErrOutsideRoot},
	{"//etc/passwd", ErrOutsideRoot},
	{"/", ErrOutsideRoot},
	{"/nonexistent-dir/x", ErrOutsideRoot},
	{"{base}/outside/secret.txt", ErrOutsideRoot},
	{"{root}/../outside/secret.txt", ErrOutsideRoot},
	{"{root}/sub/../../outside", ErrOutsideRoot},
	{"link_out", ErrOutsideRoot},
	{"link_out/secret.txt", ErrOutsideRoot},
	{"link_out/nonexistent", ErrOutsideRoot},
	{"link_out_abs", ErrOutsideRoot},
	{"chain1", ErrOutsideRoot},
	{"chain1/secret.txt", ErrOutsideRoot},
	{"chain2/secret.txt", ErrOutsideRoot},
	{"link_parent", ErrOutsideRoot},
	{"link_parent/outside/secret.txt", ErrOutsideRoot},
	{"link_in/../../outside/secret.txt", ErrOutsideRoot},
	{"sub/up", ErrOutsideRoot},
	{"sub/up/secret.txt", ErrOutsideRoot},
	{"{root}/link_out/secret.txt", ErrOutsideRoot},
	{"dangling_out", ErrInvalidPath},
	{"loop1", ErrInvalidPath},
	{"loop1/x", ErrInvalidPath},
	{"", ErrInvalidPath},
	{"\x00", ErrInvalidPath},
	{"in.txt\x00", ErrInvalidPath},
	{"in.txt\x00/../../outside", ErrInvalidPath},
	{"/proc/self/environ", ErrInvalidPath},
	{"/proc/self/root/etc/passwd", ErrInvalidPath},
	{"/proc", ErrInvalidPath},
	{"/dev/null", ErrInvalidPath},
	{"/dev/zero", ErrInvalidPath},
	{"/dev/fd/0", ErrInvalidPath},
	{"/sys/kernel", ErrInvalidPath},
	{"../../../../../../../../proc/self/environ", ErrInvalidPath},
	{"in.txt/x", ErrInvalidPath}, // a file used as a directory
	{strings.Repeat("a/", 2100), ErrInvalidPath},
}

func expand(p, root, base string) string {
	p = strings.ReplaceAll(p, "{root}", root)
	return strings.ReplaceAll(p, "{base}", base)
}

func TestResolveRefusesEscapes(t *testing.T) {
	root, base := confinedTree(t)
	for _, tt := range escapeCorpus {
		p := expand(tt.path, root.Dir(), base)
		t.Run(fmt.Sprintf("%.60s", tt.path), func(t *testing.T) {
			for name, resolve := range map[string]func(string) (string, error){
				"Resolve":         root.Resolve,
				"ResolveForWrite": root.ResolveForWrite,
			} {
				got, err := resolve(p)
				if err == nil {
					t.Fatalf("%s(%q) = %q, want an error", name, p, got)
				}
				if !errors.Is(err, tt.want) {
					t.Errorf("%s(%q) error = %v, want %v", name, p, err, tt.want)
				}
				if strings.Contains(err.Error(), "secret") && !strings.Contains(tt.path, "secret") {
					t.Errorf("%s(%q) error mentions a file outside: %v", name, p, err)
				}
			}
		})
	}
}

func TestRefusalMessagesSayWhatIsAllowed(t *testing.T) {
	root, _ := confinedTree(t)
	tests := []struct {
		path string
		want []string
	}{
		{"../outside/secret.txt", []string{"outside the working directory", root.Dir(), "only paths inside it are allowed"}},
		{"link_out/secret.txt", []string{"outside the working directory", "symlinks must not lead out"}},
		{"/dev/null", []string{"/proc, /dev and /sys are not accessible", root.Dir()}},
		{"in\x00", []string{"NUL"}},
		{"", []string{"empty path"}},
	}
	for _, tt := range tests {
		_, err := root.Resolve(tt.path)
		if err == nil {
			t.Fatalf("Resolve(%q) succeeded", tt.path)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Resolve(%q) error = %q, want it to contain %q", tt.path, err, w)
			}
		}
	}
}

func TestResolveAccepts(t *testing.T) {
	root, _ := confinedTree(t)
	dir := root.Dir()
	tests := []struct{ path, want string }{
		{".", dir},
		{"./", dir},
		{"in.txt", filepath.Join(dir, "in.txt")},
		{"./sub/../in.txt", filepath.Join(dir, "in.txt")},
		{"sub", filepath.Join(dir, "sub")},
		{"sub/", filepath.Join(dir, "sub")},
		{"sub//f.txt", filepath.Join(dir, "sub", "f.txt")},
		{"{root}", dir},
		{"{root}/in.txt", filepath.Join(dir, "in.txt")},
		{"{root}/sub/../in.txt", filepath.Join(dir, "in.txt")},
		{"link_in", filepath.Join(dir, "sub")},
		{"link_in/f.txt", filepath.Join(dir, "sub", "f.txt")},
		{"link_in_abs", filepath.Join(dir, "sub", "f.txt")},
		// ".." after a symlink is lexical: link_out/.. is the root itself.
		{"link_out/..", dir},
	}
	for _, tt := range tests {
		p := expand(tt.path, dir, "")
		got, err := root.Resolve(p)
		if err != nil {
			t.Errorf("Resolve(%q) error: %v", p, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Resolve(%q) = %q, want %q", p, got, tt.want)
		}
	}
}

func TestResolveMissing(t *testing.T) {
	root, _ := confinedTree(t)
	_, err := root.Resolve("missing.txt")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Resolve(missing) error = %v, want fs.ErrNotExist", err)
	}
	if errors.Is(err, ErrOutsideRoot) {
		t.Errorf("Resolve(missing) says outside: %v", err)
	}
}

func TestResolveForWriteAccepts(t *testing.T) {
	root, _ := confinedTree(t)
	dir := root.Dir()
	tests := []struct{ path, want string }{
		{"new.txt", filepath.Join(dir, "new.txt")},
		{"in.txt", filepath.Join(dir, "in.txt")},
		{"new/deeper/x.txt", filepath.Join(dir, "new", "deeper", "x.txt")},
		{"link_in/new.txt", filepath.Join(dir, "sub", "new.txt")},
		{"link_in_abs", filepath.Join(dir, "sub", "f.txt")},
		{"{root}/n.txt", filepath.Join(dir, "n.txt")},
		{"sub/../n.txt", filepath.Join(dir, "n.txt")},
	}
	for _, tt := range tests {
		p := expand(tt.path, dir, "")
		got, err := root.ResolveForWrite(p)
		if err != nil {
			t.Errorf("ResolveForWrite(%q) error: %v", p, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ResolveForWrite(%q) = %q, want %q", p, got, tt.want)
		}
	}
}

// The root may be given through a symlink (macOS /tmp, a symlinked home):
// NewRoot resolves it, and absolute paths spelt through the link still work.
func TestRootThroughSymlink(t *testing.T) {
	root, base := confinedTree(t)
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(root.Dir(), alias); err != nil {
		t.Fatal(err)
	}
	viaAlias, err := NewRoot(alias)
	if err != nil {
		t.Fatal(err)
	}
	if viaAlias.Dir() != root.Dir() {
		t.Errorf("NewRoot(alias).Dir() = %q, want %q", viaAlias.Dir(), root.Dir())
	}
	got, err := viaAlias.Resolve(filepath.Join(alias, "in.txt"))
	if want := filepath.Join(root.Dir(), "in.txt"); err != nil || got != want {
		t.Errorf("Resolve(alias/in.txt) = %q, %v; want %q", got, err, want)
	}
}

func TestNewRootErrors(t *testing.T) {
	root, _ := confinedTree(t)
	for _, dir := range []string{filepath.Join(root.Dir(), "in.txt"), filepath.Join(root.Dir(), "missing"), filepath.Join(root.Dir(), "loop1")} {
		if _, err := NewRoot(dir); err == nil {
			t.Errorf("NewRoot(%q) succeeded, want an error", dir)
		}
	}
	rel, err := NewRoot(".")
	if err != nil || !filepath.IsAbs(rel.Dir()) {
		t.Errorf("NewRoot(\".\") = %v, %v; want an absolute directory", rel, err)
	}
}

// A root that itself lives under /dev (a tmpfs in /dev/shm) may use its own
// files: the pseudo-filesystem rule is about leaving the root.
func TestRootUnderDevShm(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "ask-tools-test-")
	if err != nil {
		t.Skip("no writable /dev/shm:", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root, err := NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := root.ResolveForWrite("x.txt"); err != nil {
		t.Errorf("ResolveForWrite inside a /dev/shm root: %v", err)
	}
	if _, err := root.Resolve("/dev/null"); !errors.Is(err, ErrOutsideRoot) && !errors.Is(err, ErrInvalidPath) {
		t.Errorf("Resolve(/dev/null) from a /dev/shm root = %v, want a refusal", err)
	}
}

// insideRoot is the fuzz test's independent judge of containment.
func insideRoot(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsAbs(p) && rel != ".." && !strings.HasPrefix(rel, "../")
}

func FuzzResolve(f *testing.F) {
	root, base := confinedTree(f)
	for _, tt := range escapeCorpus {
		f.Add(expand(tt.path, root.Dir(), base))
	}
	for _, s := range []string{".", "in.txt", "link_in/f.txt", "new/x", "link_out/../in.txt", "sub/up/../../root/in.txt", root.Dir() + "/link_parent/root/in.txt"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if got, err := root.Resolve(p); err == nil {
			if !insideRoot(root.Dir(), got) {
				t.Fatalf("Resolve(%q) = %q, outside %q", p, got, root.Dir())
			}
			if real, err := filepath.EvalSymlinks(got); err != nil || real != got {
				t.Fatalf("Resolve(%q) = %q, not a real path (%q, %v)", p, got, real, err)
			}
		}
		if got, err := root.ResolveForWrite(p); err == nil {
			if !insideRoot(root.Dir(), got) {
				t.Fatalf("ResolveForWrite(%q) = %q, outside %q", p, got, root.Dir())
			}
			// Whatever exists of the result must resolve to itself: no
			// symlink is left for a later write to follow.
			existing := got
			for {
				if _, err := os.Lstat(existing); err == nil {
					break
				}
				existing = filepath.Dir(existing)
			}
			if real, err := filepath.EvalSymlinks(existing); err != nil || real != existing {
				t.Fatalf("ResolveForWrite(%q) = %q, existing part %q resolves to %q (%v)", p, got, existing, real, err)
			}
		}
	})
}
