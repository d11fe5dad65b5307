package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a git repository with one commit, its file a.txt in sub/.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one"}} {
		run(t, dir, args...)
	}
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestCreateKeepRemove(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	ctx := context.Background()
	head := run(t, dir, "rev-parse", "HEAD")
	wt, err := Create(ctx, filepath.Join(dir, "sub"), "fix-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, ".git", "ask-worktrees", "fix-1"); wt.Path != want || wt.Branch != "ask/fix-1" || wt.Base != head {
		t.Errorf("worktree %+v, want path %s, branch ask/fix-1, base %s", wt, want, head)
	}
	if wt.Workdir != filepath.Join(wt.Path, "sub") {
		t.Errorf("workdir %s, want the worktree's sub", wt.Workdir)
	}
	if changed, err := wt.Changed(ctx); err != nil || changed {
		t.Errorf("a new worktree changed=%t (%v)", changed, err)
	}
	if err := os.WriteFile(filepath.Join(wt.Workdir, "a.txt"), []byte("beta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := wt.Changed(ctx); err != nil || !changed {
		t.Errorf("an edited worktree changed=%t (%v)", changed, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub", "a.txt")); string(b) != "alpha\n" {
		t.Errorf("the main checkout's file is %q: it must not be touched", b)
	}
	if st := run(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("the main checkout's status is %q, want clean", st)
	}
	list, err := List(ctx, dir)
	if err != nil || len(list) != 1 || list[0].Name != "fix-1" || list[0].Branch != "ask/fix-1" {
		t.Fatalf("list %+v (%v), want fix-1", list, err)
	}
	if _, err := Create(ctx, dir, "fix-1", ""); !errors.Is(err, ErrUsage) {
		t.Errorf("a name in use: %v, want a usage error", err)
	}
	if _, err := Remove(ctx, dir, "fix-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
	if out := run(t, dir, "branch", "--list", "ask/*"); out != "" {
		t.Errorf("branches left: %q", out)
	}
	if _, err := Remove(ctx, dir, "fix-1"); !errors.Is(err, ErrUsage) {
		t.Errorf("removing it again: %v, want a usage error", err)
	}
}

func TestCreateFromBase(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	ctx := context.Background()
	first := run(t, dir, "rev-parse", "HEAD")
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "add", ".")
	run(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "two")
	wt, err := Create(ctx, dir, Auto, "HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Remove(ctx)
	if wt.Base != first {
		t.Errorf("base %s, want %s", wt.Base, first)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt is in a worktree made from the first commit")
	}
	if CheckName(wt.Name) != "" || !strings.HasPrefix(wt.Branch, "ask/") {
		t.Errorf("a fresh name %q", wt.Name)
	}
	if _, err := Create(ctx, dir, "x", "no-such-ref"); !errors.Is(err, ErrUsage) {
		t.Errorf("a base that names nothing: %v, want a usage error", err)
	}
}

func TestOutsideARepository(t *testing.T) {
	// Not parallel: the ceiling reaches git through the environment.
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	if _, err := Create(context.Background(), dir, "x", ""); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "not in a git repository") {
		t.Errorf("outside git: %v, want a usage error saying so", err)
	}
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	bad := []string{"", ".", "..", "a/b", "../x", `a\b`, "-x", ".hidden", "x.", "x.lock", "a..b", "@", "a@{1}", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\x00", "a\x7f", strings.Repeat("a", 201)}
	for _, n := range bad {
		if CheckName(n) == "" {
			t.Errorf("CheckName(%q) accepted it", n)
		}
	}
	for _, n := range []string{"fix-1", "issue_44", "v1.2", "20261129-041449-abcdef", "é"} {
		if why := CheckName(n); why != "" {
			t.Errorf("CheckName(%q) = %q, want it accepted", n, why)
		}
	}
}

// Every name CheckName accepts stays one element under the worktrees'
// directory, and git takes ask/NAME as a branch.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"fix-1", "..", "a/b", "a.lock", "@{", "x y"} {
		f.Add(s)
	}
	_, gitErr := exec.LookPath("git")
	f.Fuzz(func(t *testing.T, name string) {
		if CheckName(name) != "" {
			return
		}
		root := "/r/.git/ask-worktrees"
		if p := filepath.Join(root, name); filepath.Dir(p) != root || filepath.Base(p) != name {
			t.Fatalf("%q escapes: %s", name, p)
		}
		if gitErr == nil {
			if out, err := exec.Command("git", "check-ref-format", "refs/heads/ask/"+name).CombinedOutput(); err != nil {
				t.Fatalf("git refuses ask/%q: %v %s", name, err, out)
			}
		}
	})
}

func TestHolds(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	ctx := context.Background()
	root := filepath.Join(dir, ".git", Dir)
	tests := []struct {
		path string
		want bool
	}{
		{filepath.Join(root, "fix"), true},
		{filepath.Join(root, "fix", "sub"), true},
		{root, false},
		{filepath.Join(root, "..", "hooks"), false},
		{filepath.Join(dir, "sub"), false},
		{t.TempDir(), false},
		{"/etc", false},
	}
	for _, tt := range tests {
		if got := Holds(ctx, filepath.Join(dir, "sub"), tt.path); got != tt.want {
			t.Errorf("Holds(%s) = %t, want %t", tt.path, got, tt.want)
		}
	}
	if Holds(ctx, t.TempDir(), filepath.Join(root, "fix")) {
		t.Error("a directory outside the repository holds its worktrees")
	}
}
