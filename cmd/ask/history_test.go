package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/history"
)

// Runs at once share only the history directory: each keeps its own
// whole transcript, pruning leaves no broken file and no temporary one,
// and the list afterwards reads every kept run (DESIGN §8).
func TestHistoryUnderConcurrentRuns(t *testing.T) {
	t.Parallel()
	const runs = 8
	var replies []fakeprovider.Reply
	for range runs {
		replies = append(replies, fakeprovider.Reply{Text: "ok"})
	}
	srv := fakeprovider.Start(replies...)
	defer srv.Close()
	state := t.TempDir()
	for _, limit := range []string{"", "3"} {
		e := askEnv{server: srv, wd: t.TempDir(), env: map[string]string{"XDG_STATE_HOME": state, "ASK_HISTORY_RUNS": limit}}
		var wg sync.WaitGroup
		for i := range runs / 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r := runAsk(t, e, "--no-tools", fmt.Sprint("run ", i)); r.code != 0 {
					t.Errorf("run %d: exit %d: %s", i, r.code, r.stderr)
				}
			}()
		}
		wg.Wait()
		r := runAsk(t, e, "log", "--json")
		var list []history.Entry
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatalf("ask log --json: %v: %q", err, r.stdout)
		}
		want := runs / 2
		if limit == "3" {
			want = 3
		}
		if len(list) != want {
			t.Errorf("ASK_HISTORY_RUNS=%q: %d runs listed, want %d", limit, len(list), want)
		}
		for _, e := range list {
			if e.Status != "completed" {
				t.Errorf("run %s is %q", e.ID, e.Status)
			}
		}
		files, _ := os.ReadDir(filepath.Join(state, "ask", "runs"))
		if len(files) != want {
			t.Errorf("%d files kept, want %d (no temporary ones)", len(files), want)
		}
	}
}
