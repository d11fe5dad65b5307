package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/batch"
	"github.com/ask-cli/ask/internal/fakeprovider"
)

// A task line's paths are checked where they lead, not as written: a
// checkout's link `escape -> outside` makes "escape/photo.pdf" and
// "escape" look inside the working directory, yet an attach through it
// sends a file from outside and a workdir through it runs the model
// there. Each is refused as a widening key for its task alone.
func TestBatchTaskPathsThroughALinkAreRefused(t *testing.T) {
	t.Parallel()
	wd, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "photo.pdf"), []byte("%PDF-1.4 the outside secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(wd, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(wd, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tasks := filepath.Join(wd, "tasks.jsonl")
	lines := `{"id":"attach","prompt":"describe it","attach":["escape/photo.pdf"]}
{"id":"workdir","prompt":"list the files","workdir":"escape"}
{"id":"inside","prompt":"list the files","workdir":"sub"}
`
	if err := os.WriteFile(tasks, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.StartFunc(func([]byte) fakeprovider.Reply { return fakeprovider.Reply{Text: "done"} })
	defer srv.Close()
	res := runAsk(t, askEnv{server: srv, wd: wd, env: map[string]string{"XDG_STATE_HOME": t.TempDir(), "HOME": t.TempDir()}},
		"batch", "-j", "1", tasks)
	for _, req := range srv.Requests() {
		if s := string(req); strings.Contains(s, filepath.Base(outside)) || strings.Contains(s, "JVBERi0") { // base64 of %PDF-
			t.Errorf("a request reached outside the working directory through the link: %.300s", s)
		}
	}
	byID := map[string]batch.Result{}
	for _, l := range readResults(t, res.stdout) {
		byID[l.ID] = l
	}
	for _, key := range []string{"attach", "workdir"} {
		got := byID[key]
		if got.Status != batch.StatusError || got.ExitCode != 2 || !strings.Contains(got.Error, `"`+key+`" would widen`) {
			t.Errorf("task %s: %+v, want status error, exit 2, naming the key", key, got)
		}
	}
	if got := byID["inside"]; got.Status != "completed" {
		t.Errorf("task inside: %+v (stderr %s), want it run: a real subdirectory narrows", got, res.stderr)
	}
}

// A task line's paths are read from where ask started, but must lie
// inside the command line's --workdir: with --workdir proj, a sibling
// "secrets" is inside where ask started and outside what the command line
// allowed, for a workdir and for an attachment alike.
func TestBatchTaskPathsStayInsideTheCommandLinesWorkdir(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	for _, dir := range []string{"proj/sub", "secrets"} {
		if err := os.MkdirAll(filepath.Join(top, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(top, "secrets", "scan.pdf"), []byte("%PDF-1.4 the secret scan\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tasks := filepath.Join(top, "tasks.jsonl")
	lines := `{"id":"workdir","prompt":"list the files","workdir":"secrets"}
{"id":"attach","prompt":"describe it","attach":["secrets/scan.pdf"]}
{"id":"inside","prompt":"list the files","workdir":"proj/sub"}
`
	if err := os.WriteFile(tasks, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.StartFunc(func([]byte) fakeprovider.Reply { return fakeprovider.Reply{Text: "done"} })
	defer srv.Close()
	res := runAsk(t, askEnv{server: srv, wd: top, env: map[string]string{"XDG_STATE_HOME": t.TempDir(), "HOME": t.TempDir()}},
		"batch", "-j", "1", "--workdir", "proj", tasks)
	for _, req := range srv.Requests() {
		if s := string(req); strings.Contains(s, "secrets") || strings.Contains(s, "JVBERi0") {
			t.Errorf("a request reached outside the command line's --workdir: %.300s", s)
		}
	}
	byID := map[string]batch.Result{}
	for _, l := range readResults(t, res.stdout) {
		byID[l.ID] = l
	}
	for _, key := range []string{"workdir", "attach"} {
		got := byID[key]
		if got.Status != batch.StatusError || got.ExitCode != 2 || !strings.Contains(got.Error, `"`+key+`" would widen`) {
			t.Errorf("task %s: %+v, want status error, exit 2, naming the key", key, got)
		}
	}
	if got := byID["inside"]; got.Status != "completed" {
		t.Errorf("task inside: %+v (stderr %s), want it run", got, res.stderr)
	}
}

// `ask replay last` replays the person's last kept run here, not a file
// named last that the checkout holds: its recorded calls would be put to
// the person as if they were their own run's.
func TestReplayLastIsTheKeptRunNotTheCheckoutsFile(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": t.TempDir(), "HOME": t.TempDir()}
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "the kept answer"})
	defer srv.Close()
	if res := runAsk(t, askEnv{server: srv, wd: wd, env: env}, "say something"); res.code != 0 {
		t.Fatalf("the first run: %d %s", res.code, res.stderr)
	}
	// The checkout's file: were it read, the replay would be of it.
	if err := os.WriteFile(filepath.Join(wd, "last"), []byte(`{"type":"run.started","note":"FORGED"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runAsk(t, askEnv{wd: wd, env: env}, "replay", "last")
	if res.code != 0 || !strings.Contains(res.stdout, "the kept answer") {
		t.Errorf("ask replay last: code %d, stdout %q, stderr %q; want the kept run replayed", res.code, res.stdout, res.stderr)
	}
}
