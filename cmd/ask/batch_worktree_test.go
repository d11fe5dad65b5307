package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// Eight tasks of ask batch --worktree edit one repository at once, each
// in a worktree of its own: every edit lands on its task's branch, every
// result line names that branch, and the main checkout is untouched.
func TestBatchWorktreesEditOneRepositoryAtOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("makes eight git worktrees")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	const n = 8
	for i := range n {
		if err := os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%d.txt", i)), []byte("alpha\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", ".")
	git("commit", "-q", "-m", "one")
	head := git("rev-parse", "HEAD")

	// The model edits the file its prompt names, then answers; every
	// request of every task is answered by what it holds, whatever the
	// order the tasks' requests come in.
	srv := fakeprovider.StartFunc(func(body []byte) fakeprovider.Reply {
		prompt := fakeprovider.FirstUserText(body)
		if strings.Contains(string(body), `"role":"tool"`) {
			return fakeprovider.Reply{Text: "edited " + prompt}
		}
		args := fmt.Sprintf(`{"path":%q,"old_text":"alpha","new_text":"beta %s"}`, prompt, prompt)
		return fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "edit_file", args)}}
	})
	t.Cleanup(srv.Close)
	var tasks strings.Builder
	for i := range n {
		fmt.Fprintf(&tasks, `{"id":"t%d","prompt":"f%d.txt"}`+"\n", i, i)
	}
	r := runAsk(t, askEnv{server: srv, wd: repo, stdin: tasks.String(), env: map[string]string{"XDG_STATE_HOME": t.TempDir()}},
		"batch", "-j", fmt.Sprint(n), "--worktree", "--accept-edits")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	results := readResults(t, r.stdout)
	if len(results) != n {
		t.Fatalf("%d results, want %d:\n%s", len(results), n, r.stdout)
	}
	branches := map[string]bool{}
	for _, res := range results {
		w := res.Worktree
		if res.Status != "completed" || w == nil {
			t.Errorf("result %+v, want completed with its worktree", res)
			continue
		}
		if !strings.HasPrefix(w.Branch, "ask/") || branches[w.Branch] || w.Base != head {
			t.Errorf("%s: worktree %+v: want a branch of its own from %s", res.ID, w, head)
		}
		branches[w.Branch] = true
		file := strings.Replace(res.ID, "t", "f", 1) + ".txt"
		if b, err := os.ReadFile(filepath.Join(w.Path, file)); err != nil || string(b) != "beta "+file+"\n" {
			t.Errorf("%s: %s in its worktree is %q (%v), want its edit", res.ID, file, b, err)
		}
		if got := strings.Fields(git("-C", w.Path, "status", "--porcelain")); len(got) != 2 || got[1] != file {
			t.Errorf("%s: its worktree's changes are %q, want %s alone", res.ID, got, file)
		}
	}
	if got := git("status", "--porcelain"); got != "" {
		t.Errorf("the main checkout changed: %q", got)
	}
	for i := range n {
		if b, _ := os.ReadFile(filepath.Join(repo, fmt.Sprintf("f%d.txt", i))); string(b) != "alpha\n" {
			t.Errorf("f%d.txt in the main checkout is %q", i, b)
		}
	}
	list := gjson.Parse(runAsk(t, askEnv{wd: repo}, "worktree", "list", "--json").stdout)
	if got := len(list.Array()); got != n {
		t.Errorf("ask worktree list: %d worktrees, want %d", got, n)
	}
}
