package run

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// The git state undo needs is read for a step that may change something,
// before its command runs, and never for a one-shot answer or a step of
// readers alone: a fake git on PATH logs each start, and prints what the
// command's file holds when it is asked, which must be what the run found.
func TestGitStateReadBeforeTheFirstChange(t *testing.T) {
	bin := t.TempDir()
	logf := filepath.Join(t.TempDir(), "git.log")
	// git is run as git -c core.fsmonitor=false -C DIR SUBCOMMAND ...
	script := "#!/bin/sh\necho \"$5 $(cat \"$4/f.txt\")\" >> " + logf + "\nexit 128\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("GIT_DIR", "")
	for _, tt := range []struct {
		name  string
		calls []providers.ToolCall
		want  string // the log, sorted: git's subcommands and f.txt as each found it
	}{
		{name: "one-shot answer"},
		{name: "readers alone", calls: []providers.ToolCall{
			fakeprovider.Call("c1", "read_file", `{"path":"f.txt"}`),
			fakeprovider.Call("c2", "list_directory", `{"path":"."}`)}},
		{name: "a command", calls: []providers.ToolCall{fakeprovider.Call("c1", "shell", `{"command":"echo changed > f.txt"}`)},
			want: "rev-parse as found\nrev-parse as found\nstatus as found\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(logf)
			var mu sync.Mutex
			n := 0
			srv := fakeprovider.StartFunc(func([]byte) fakeprovider.Reply {
				mu.Lock()
				defer mu.Unlock()
				if n++; n == 1 && tt.calls != nil {
					return fakeprovider.Reply{Calls: tt.calls}
				}
				return fakeprovider.Reply{Text: "done"}
			})
			defer srv.Close()
			w := newWorld(t, srv)
			if err := os.MkdirAll(filepath.Join(w.wd, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.wd, "f.txt"), []byte("as found\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			w.environ = []string{"PATH=" + os.Getenv("PATH")}
			r := w.ask("log", "yes", true, "no-stream", true)
			if r.err != nil || r.Status != "completed" {
				t.Fatalf("run: %v %v", r.err, r.Status)
			}
			log, _ := os.ReadFile(logf)
			lines := strings.SplitAfter(string(log), "\n")
			slices.Sort(lines)
			if got := strings.Join(lines, ""); got != tt.want {
				t.Errorf("git log:\n%s\nwant:\n%s", got, tt.want)
			}
			if tt.want != "" && !strings.Contains(string(must(os.ReadFile(filepath.Join(w.wd, "f.txt")))), "changed") {
				t.Errorf("the command did not run")
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
