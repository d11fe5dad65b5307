package run

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/sandbox/sandboxtest"
)

// In a --worktree run, --sandbox workdir makes the worktree writable and
// nothing else: not the main checkout, not its .git, not the worktree's
// pointer to its git directory (which would point git elsewhere).
func TestWorktreeSandboxWritesOnlyTheWorktree(t *testing.T) {
	t.Parallel()
	sandboxtest.Require(t, sandbox.Policy{Level: sandbox.Workdir})
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "one"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	call := func(id, command string) providers.ToolCall {
		return fakeprovider.Call(id, "shell", fmt.Sprintf(`{"command":%q}`, command))
	}
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			call("in", "echo x > in.txt"),
			call("main", "echo x > "+filepath.Join(repo, "main.txt")),
			call("gitdir", "echo x > "+filepath.Join(repo, ".git", "evil")),
			call("pointer", "echo 'gitdir: /tmp' > .git"),
		}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	w := newWorld(t, srv)
	w.wd, w.sandbox = repo, sandbox.Check
	r := w.ask("write", "sandbox", "workdir", "yes", true, "worktree", "sb")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	wt := filepath.Join(repo, ".git", "ask-worktrees", "sb")
	if _, err := os.Stat(filepath.Join(wt, "in.txt")); err != nil {
		t.Errorf("nothing written in the worktree: %v", err)
	}
	for _, p := range []string{filepath.Join(repo, "main.txt"), filepath.Join(repo, ".git", "evil")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written from the sandbox", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(wt, ".git")); !strings.HasPrefix(string(b), "gitdir: "+filepath.Join(repo, ".git", "worktrees")) {
		t.Errorf("the worktree's .git now says %q", b)
	}
}
