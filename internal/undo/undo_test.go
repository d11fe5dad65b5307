package undo

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/records"
)

func intp(n int) *int { return &n }

// changed is a file.changed event: a file tool's when counted, with its
// content before and after (nil for none).
func changed(path, action, tool string, before, after *string) records.Event {
	ch := &records.Change{Path: path, Action: action, Tool: tool}
	if tool != "shell" {
		ch.LinesAdded, ch.LinesRemoved = intp(1), intp(1)
	}
	c := &records.Contents{}
	if before != nil {
		c.SetBefore([]byte(*before))
	}
	if after != nil {
		c.SetAfter([]byte(*after))
		c.AfterSHA256 = hash([]byte(*after))
	}
	return records.Event{Type: records.TypeFileChanged, Change: ch, Contents: c}
}

func started(workdir string, git *records.GitState) records.Event {
	return records.Event{Type: records.TypeRunStarted, Settings: &records.Settings{Workdir: workdir}, Git: git}
}

// TestFromEvents checks how a run's changes fold into one a file: the
// state before the first change, and after the last.
func TestFromEvents(t *testing.T) {
	t.Parallel()
	git := &records.GitState{Head: "abc", Dirty: []string{"dirty.txt"}}
	for _, tc := range []struct {
		name   string
		git    *records.GitState
		events []records.Event
		want   []File
	}{
		{
			name:   "edited twice: the first before, the last after",
			events: []records.Event{changed("a", "edited", "edit_file", ptr("1"), ptr("2")), changed("a", "edited", "edit_file", ptr("2"), ptr("3"))},
			want:   []File{{Path: "a", Tool: "edit_file", Before: []byte("1"), HasBefore: true, After: []byte("3"), HasAfter: true, AfterSHA256: hash([]byte("3"))}},
		},
		{
			name:   "created then edited",
			events: []records.Event{changed("n", "created", "write_file", nil, ptr("x")), changed("n", "edited", "edit_file", ptr("x"), ptr("y"))},
			want:   []File{{Path: "n", Tool: "write_file", Created: true, After: []byte("y"), HasAfter: true, AfterSHA256: hash([]byte("y"))}},
		},
		{
			name:   "created then deleted: no change",
			events: []records.Event{changed("tmp", "created", "shell", nil, ptr("x")), changed("tmp", "deleted", "shell", nil, nil)},
		},
		{
			name:   "a command's change in git, clean",
			git:    git,
			events: []records.Event{changed("t", "changed", "shell", nil, ptr("new"))},
			want:   []File{{Path: "t", Tool: "shell", FromGit: true, After: []byte("new"), HasAfter: true, AfterSHA256: hash([]byte("new"))}},
		},
		{
			name:   "a command deleted a file in git",
			git:    git,
			events: []records.Event{changed("g", "deleted", "shell", nil, nil)},
			want:   []File{{Path: "g", Tool: "shell", FromGit: true, Deleted: true}},
		},
		{
			name:   "a command's change to a dirty file",
			git:    git,
			events: []records.Event{changed("dirty.txt", "changed", "shell", nil, ptr("new"))},
			want: []File{{Path: "dirty.txt", Tool: "shell", Why: "shell changed it, and it had changes not committed when the run started: git cannot restore them",
				After: []byte("new"), HasAfter: true, AfterSHA256: hash([]byte("new"))}},
		},
		{
			name:   "a command's change outside git",
			events: []records.Event{changed("t", "changed", "shell", nil, ptr("new"))},
			want: []File{{Path: "t", Tool: "shell", Why: "shell changed it outside a git repository, and commands' changes are recorded without the content before",
				After: []byte("new"), HasAfter: true, AfterSHA256: hash([]byte("new"))}},
		},
		{
			name:   "a repository with no commit",
			git:    &records.GitState{},
			events: []records.Event{changed("t", "changed", "shell", nil, nil)},
			want:   []File{{Path: "t", Tool: "shell", Why: "shell changed it, and the repository had no commit to restore it from"}},
		},
		{
			name:   "a file tool's change recorded by an older ask",
			events: []records.Event{{Type: records.TypeFileChanged, Change: &records.Change{Path: "o", Action: "edited", Tool: "edit_file", LinesAdded: intp(1), LinesRemoved: intp(0)}}},
			want:   []File{{Path: "o", Tool: "edit_file", Why: "the run was recorded by an older ask, without the content before"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := FromEvents(append([]records.Event{started("/w", tc.git)}, tc.events...))
			if run.Workdir != "/w" || run.Git != tc.git {
				t.Errorf("workdir %q, git %v", run.Workdir, run.Git)
			}
			if len(run.Files) != len(tc.want) {
				t.Fatalf("files %+v, want %+v", run.Files, tc.want)
			}
			for i, f := range run.Files {
				w := tc.want[i]
				if f.Path != w.Path || f.Tool != w.Tool || f.Created != w.Created || f.Deleted != w.Deleted || f.FromGit != w.FromGit ||
					f.HasBefore != w.HasBefore || !bytes.Equal(f.Before, w.Before) || f.Why != w.Why ||
					f.HasAfter != w.HasAfter || !bytes.Equal(f.After, w.After) || f.AfterSHA256 != w.AfterSHA256 {
					t.Errorf("file %d:\n got %+v\nwant %+v", i, f, w)
				}
			}
		})
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUndo puts back each file that is still as the run left it, and
// names the others with why.
func TestUndo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The tree as the run left it, then as the user left it.
	writeFiles(t, dir, map[string]string{
		"edited.txt":  "after\n",
		"new.txt":     "made\n",
		"touched.txt": "after\n",
		"shell.txt":   "by shell\n",
		"undone.txt":  "before\n",
		"remade.txt":  "again\n",
	})
	if err := os.WriteFile(filepath.Join(dir, "touched.txt"), []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	run := FromEvents([]records.Event{
		started(dir, nil),
		changed("edited.txt", "edited", "edit_file", ptr("before\n"), ptr("after\n")),
		changed("new.txt", "created", "write_file", nil, ptr("made\n")),
		changed("touched.txt", "edited", "edit_file", ptr("before\n"), ptr("after\n")),
		changed("shell.txt", "changed", "shell", nil, ptr("by shell\n")),
		changed("undone.txt", "edited", "edit_file", ptr("before\n"), ptr("after\n")),
		changed("gone.txt", "created", "write_file", nil, ptr("x\n")),
		changed("link.txt", "overwrote", "write_file", ptr("old\n"), ptr("new\n")),
		changed("remade.txt", "deleted", "shell", nil, nil),
	})
	got, err := run.Undo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Outcome{
		{"edited.txt", "restored", ""},
		{"new.txt", "removed", ""},
		{"touched.txt", "left", "it has changed since the run"},
		{"shell.txt", "left", "shell changed it outside a git repository, and commands' changes are recorded without the content before"},
		{"undone.txt", "unchanged", "already as before the run"},
		{"gone.txt", "unchanged", "already as before the run"},
		{"link.txt", "left", "it is no longer a regular file"},
		{"remade.txt", "left", "the run deleted it, and it has been made again since"},
	}
	if len(got) != len(want) {
		t.Fatalf("outcomes %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("outcome %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for name, content := range map[string]string{"edited.txt": "before\n", "touched.txt": "the user's\n", "shell.txt": "by shell\n"} {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(data) != content {
			t.Errorf("%s is %q (%v), want %q", name, data, err, content)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "new.txt")); err == nil {
		t.Error("new.txt is still there")
	}
	if target, _ := os.Readlink(filepath.Join(dir, "link.txt")); target != "/etc/passwd" {
		t.Errorf("link.txt points to %q", target)
	}
}

// gitRepo makes a repository in a new directory with files committed.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

// TestUndoFromGit restores the tracked files a command changed from the
// commit checked out when the run started, in a working directory below
// the repository's top, executable modes and all.
func TestUndoFromGit(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"sub/t.txt": "one\n", "sub/run.sh": "#!/bin/sh\n", "sub/dirty.txt": "d\n", "top.txt": "top\n"})
	if err := os.Chmod(filepath.Join(repo, "sub/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-am", "exec")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	dir := filepath.Join(repo, "sub")
	writeFiles(t, dir, map[string]string{"dirty.txt": "uncommitted\n", "untracked.txt": "u\n"})
	st, err := GitStateOf(context.Background(), dir)
	if err != nil || st == nil {
		t.Fatalf("GitStateOf: %v, %v", st, err)
	}
	if st.Prefix != "sub/" || len(st.Head) != 40 || strings.Join(st.Dirty, ",") != "dirty.txt" {
		t.Fatalf("git state %+v, want prefix sub/, a head and dirty.txt dirty", st)
	}
	// What commands did in the run.
	writeFiles(t, dir, map[string]string{"t.txt": "ONE\n", "dirty.txt": "more\n", "untracked.txt": "more\n"})
	if err := os.Remove(filepath.Join(dir, "run.sh")); err != nil {
		t.Fatal(err)
	}
	run := FromEvents([]records.Event{
		started(dir, st),
		changed("t.txt", "changed", "shell", nil, ptr("ONE\n")),
		changed("run.sh", "deleted", "shell", nil, nil),
		changed("dirty.txt", "changed", "shell", nil, ptr("more\n")),
		changed("untracked.txt", "changed", "shell", nil, ptr("more\n")),
	})
	var patch bytes.Buffer
	skipped := run.Patch(context.Background(), &patch)
	wantPatch := "diff --git a/t.txt b/t.txt\n--- a/t.txt\n+++ b/t.txt\n@@ -1 +1 @@\n-one\n+ONE\n" +
		"diff --git a/run.sh b/run.sh\ndeleted file mode 100755\n--- a/run.sh\n+++ /dev/null\n@@ -1 +0,0 @@\n-#!/bin/sh\n"
	if patch.String() != wantPatch {
		t.Errorf("patch:\n%s\nwant:\n%s", patch.String(), wantPatch)
	}
	if len(skipped) != 2 || skipped[0].Path != "dirty.txt" || skipped[1].Path != "untracked.txt" {
		t.Errorf("skipped %+v, want dirty.txt and untracked.txt", skipped)
	}
	got, err := run.Undo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Outcome{
		{"t.txt", "restored", ""},
		{"run.sh", "restored", ""},
		{"dirty.txt", "left", "shell changed it, and it had changes not committed when the run started: git cannot restore them"},
		{"untracked.txt", "left", "shell changed it, and it was not in git's last commit when the run started: its content before was not recorded"},
	}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("outcomes %+v\nwant %+v", got, want)
			break
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "t.txt")); string(data) != "one\n" {
		t.Errorf("t.txt is %q", data)
	}
	if info, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || info.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh: %v, %v; want it back, executable", info, err)
	}
}

// TestGitStateOutsideRepository is nil, with no error, outside git.
func TestGitStateOutsideRepository(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	st, err := GitStateOf(context.Background(), dir)
	if st != nil || err != nil {
		t.Errorf("GitStateOf outside a repository: %+v, %v", st, err)
	}
}

// TestPatchSkipsUnrecorded names a file whose content after was not
// recorded (over 1 MB) rather than writing a patch git would refuse, and
// writes a binary file's as a binary patch.
func TestPatchSkipsUnrecorded(t *testing.T) {
	t.Parallel()
	run := FromEvents([]records.Event{started("/w", nil),
		changed("b.bin", "created", "write_file", nil, ptr("\x00\x01")),
		changed("big", "created", "shell", nil, nil),
	})
	var patch bytes.Buffer
	skipped := run.Patch(context.Background(), &patch)
	if !strings.Contains(patch.String(), "GIT binary patch") || len(skipped) != 1 || skipped[0].Path != "big" || !strings.Contains(skipped[0].Why, "larger than 1 MB") {
		t.Errorf("patch %q, skipped %+v", patch.String(), skipped)
	}
}

// TestGitStateNoCommit is a repository with no commit yet: no head, so
// that undo says git has nothing to restore from.
func TestGitStateNoCommit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	st, err := GitStateOf(context.Background(), dir)
	if err != nil || st == nil || st.Head != "" || st.Prefix != "" {
		t.Errorf("GitStateOf in a repository with no commit: %+v, %v", st, err)
	}
}

// TestGitStateStartsNoGitOutsideRepository: outside any repository no git
// process is started (a run's first command would wait for it), while in
// one, below its top or through a symbolic link, git is asked.
func TestGitStateStartsNoGitOutsideRepository(t *testing.T) {
	bin := t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	script := "#!/bin/sh\necho \"$*\" >> " + calls + "\nexit 128\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	t.Setenv("GIT_DIR", "")
	outside := t.TempDir()
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(outside, "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		dir  string
		git  bool
		name string
	}{
		{outside, false, "outside"},
		{sub, true, "below the top"},
		{link, true, "through a link into it"},
	} {
		os.Remove(calls)
		if st, err := GitStateOf(context.Background(), tt.dir); st != nil || err != nil {
			t.Errorf("%s: state %+v, %v; want none (git fails)", tt.name, st, err)
		}
		_, err := os.Stat(calls)
		if ran := err == nil; ran != tt.git {
			t.Errorf("%s: git run = %v, want %v", tt.name, ran, tt.git)
		}
	}
	t.Setenv("GIT_DIR", filepath.Join(repo, ".git"))
	os.Remove(calls)
	GitStateOf(context.Background(), outside)
	if _, err := os.Stat(calls); err != nil {
		t.Errorf("with GIT_DIR set, git was not asked")
	}
}
