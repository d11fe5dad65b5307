package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// gitRepo makes a repository with one commit in dir.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	sh(t, dir, "git init -q -b main && echo a > a.txt && "+gitAs+"add a.txt && "+gitAs+"commit -qm a")
}

const gitAs = "git -c user.name=t -c user.email=t@example.com "

// sh runs script outside any sandbox, in dir.
func sh(t *testing.T, dir, script string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// plantScript builds .cache/g, a git directory whose config runs a
// command (core.fsmonitor) that makes pwned, sharing the real objects and
// refs, and points the repository at it with a name at .git's top level:
// commondir (.cache/g is then the common directory, its config the one git
// reads), or config.worktree with extensions.worktreeConfig.
func plantScript(pwned, how string) string {
	build := "rm -rf .cache/g && mkdir -p .cache/g && ln -s ../../.git/objects .cache/g/objects && ln -s ../../.git/refs .cache/g/refs && " +
		"printf '[core]\\n\\trepositoryformatversion = 1\\n\\tfsmonitor = \"touch " + pwned + "; false\"\\n[extensions]\\n\\tworktreeConfig = true\\n' > .cache/g/config"
	if how == "commondir" {
		return build + " && echo ../.cache/g > .git/commondir"
	}
	return build + " && cp .cache/g/config .git/" + how
}

// Issue 37, item 2: in --sandbox workdir a command planted .git/commondir
// pointing at a configuration of its own, and the person's next git
// status, outside any sandbox, ran its command. Nothing new stays at
// .git's top level; what git writes in ordinary work still can be.
func TestGitPlantedCommondir(t *testing.T) {
	w := newWorld(t)
	p := w.policy(Workdir, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	gitRepo(t, w.workdir)

	// The attack is real: unconfined, git status runs the planted command.
	control := realDir(t)
	gitRepo(t, control)
	pwned := filepath.Join(w.outside, "PWNED")
	sh(t, control, plantScript(pwned, "commondir"))
	sh(t, control, "git status --short || true")
	if _, err := os.Stat(pwned); err != nil {
		t.Fatalf("the planted commondir did not work even unconfined, so this test shows nothing: %v", err)
	}
	os.Remove(pwned)

	for _, how := range []string{"commondir", "config.worktree"} {
		out, err := run(t, sb, w.workdir, plantScript(pwned, how))
		if err != nil {
			t.Logf("%s: the plant failed in the sandbox: %v\n%s", how, err, out)
		} else if !strings.Contains(out, "the sandbox removed") {
			t.Errorf("%s: the removal was not told to the command's output:\n%s", how, out)
		}
		sh(t, w.workdir, "git status --short >/dev/null 2>&1 || true")
		if _, err := os.Stat(pwned); err == nil {
			t.Fatalf("%s: a real git status ran the command planted in the sandbox", how)
		}
		if _, err := os.Lstat(filepath.Join(w.workdir, ".git", how)); err == nil {
			t.Errorf(".git/%s is still there", how)
		}
	}

	// A worktree another process adds while a command runs stays.
	cmd0 := exec.Command("/bin/sh", "-c", "echo started; read x")
	cmd0.Dir = w.workdir
	in, _ := cmd0.StdinPipe()
	out0, _ := cmd0.StdoutPipe()
	job0, err := sb.Confine(cmd0)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd0.Start(); err != nil {
		t.Fatal(err)
	}
	job0.Started()
	buf0 := make([]byte, 8)
	out0.Read(buf0)
	sh(t, w.workdir, "git worktree add -q "+filepath.Join(w.outside, "wt")+" -b wt")
	in.Close()
	cmd0.Wait()
	job0.Err()
	if got := sh(t, w.workdir, "git worktree list --porcelain | grep -c ^worktree"); strings.TrimSpace(got) != "2" {
		t.Errorf("a worktree added while a command ran was removed: %q", got)
	}

	// A command killed before its end (a timeout kills the init too)
	// leaves nothing either.
	cmd := exec.Command("/bin/sh", "-c", plantScript(pwned, "commondir")+" && echo planted && sleep 60")
	cmd.Dir = w.workdir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	job, err := sb.Confine(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	job.Started()
	buf := make([]byte, 8)
	n, _ := stdout.Read(buf)
	if string(buf[:n]) != "planted\n" {
		t.Fatalf("the command did not plant: %q", buf[:n])
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	job.Err()
	if _, err := os.Lstat(filepath.Join(w.workdir, ".git", "commondir")); err == nil {
		t.Errorf("a killed command's .git/commondir is still there")
	}
}

// git's ordinary work still works in --sandbox workdir, and the sweep
// removes none of what it wrote: add, commit, stash, checkout, rebase,
// cherry-pick and merge.
func TestGitWorksInWorkdir(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: it runs git's ordinary work in the sandbox")
	}
	w := newWorld(t)
	p := w.policy(Workdir, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	gitRepo(t, w.workdir)
	before := names(filepath.Join(w.workdir, ".git"))
	work := strings.Join([]string{
		"set -e",
		"echo b >> a.txt", gitAs + "add a.txt", gitAs + "commit -qm b",
		"echo c >> a.txt", gitAs + "stash -q", gitAs + "checkout -q -b side HEAD~1",
		"echo s > s.txt", gitAs + "add s.txt", gitAs + "commit -qm s",
		gitAs + "checkout -q main", gitAs + "stash pop -q", gitAs + "commit -qam c",
		gitAs + "rebase -q main side", gitAs + "checkout -q main",
		gitAs + "cherry-pick side", gitAs + "merge -q --no-edit side",
		"test -f s.txt",
	}, "\n")
	out, err := run(t, sb, w.workdir, work)
	if err != nil || strings.Contains(out, "sandbox removed") {
		t.Fatalf("git's ordinary work in the sandbox: %v\n%s", err, out)
	}
	after := names(filepath.Join(w.workdir, ".git"))
	for _, n := range after {
		if !slices.Contains(before, n) && !gitMayWrite(n) {
			t.Errorf(".git/%s appeared", n)
		}
	}
	if got := sh(t, w.workdir, "git status --short"); got != "" {
		t.Errorf("git status after the work: %q", got)
	}
}
