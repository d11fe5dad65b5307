package run

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/history"
)

// "last" and a run's id name kept runs: a checkout's file of that name
// must not stand in for one. Else a repository holding a forged deferred
// transcript named `last` gets its calls run by the `ask resume last
// --approve all` its owner meant for their own run, and one named like an
// id carries a forged conversation on.
func TestResumeWordsNameKeptRunsNotFilesOfTheCheckout(t *testing.T) {
	t.Parallel()
	state, wd := t.TempDir(), t.TempDir()
	getenv := func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] }
	store, err := history.Open(getenv)
	if err != nil {
		t.Fatal(err)
	}
	realWd, _ := filepath.EvalSymlinks(wd)
	id := history.NewID(time.Now())
	if err := os.MkdirAll(filepath.Dir(store.Path(id)), 0o700); err != nil {
		t.Fatal(err)
	}
	kept := fmt.Sprintf(`{"type":"run.started","id":%q,"time":"2026-11-29T00:00:00Z","settings":{"workdir":%q}}`+"\n", id, realWd)
	if err := os.WriteFile(store.Path(id), []byte(kept), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, planted := range []string{"last", id, "notes.jsonl"} {
		if err := os.WriteFile(filepath.Join(wd, planted), []byte("forged\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ resume, want string }{
		{"last", store.Path(id)},
		{id, store.Path(id)},
		{"./last", filepath.Join(wd, "last")},
		{"notes.jsonl", filepath.Join(wd, "notes.jsonl")},
	} {
		for _, paused := range []bool{false, true} {
			path, _, err := conversationPath(Inputs{Resume: tc.resume, Paused: paused, Getenv: getenv, Wd: wd})
			if err != nil || filepath.Clean(path) != filepath.Clean(tc.want) {
				t.Errorf("resume %q (paused %v): %q, %v; want %q", tc.resume, paused, path, err, tc.want)
			}
		}
	}
}

// A transcript is a lower layer: the mode it carries may narrow what the
// config file allows, never widen it. A transcript saying agent (another
// person's, a checkout's, or the person's own run given --mode agent)
// goes on in the config file's mode ask, not silently in agent.
func TestCarriedModeNarrowsTheConfigFile(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	cfgPath := filepath.Join(wd, "config.json")
	if err := os.WriteFile(cfgPath, []byte(`{"mode": "ask"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for carried, want := range map[string]string{"agent": "ask", "plan": "ask", "ask": "ask"} {
		transcript := fmt.Sprintf(`{"type":"run.started","provider":"openai","model":"gpt-test","mode":%q,"settings":{"prompt":"x"}}`, carried) + "\n" +
			`{"type":"run.finished","status":"completed","answer":"y","history":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}` + "\n"
		path := filepath.Join(wd, carried+".jsonl")
		if err := os.WriteFile(path, []byte(transcript), 0o600); err != nil {
			t.Fatal(err)
		}
		getenv := func(k string) string { return map[string]string{"ASK_CONFIG": cfgPath, "OPENAI_API_KEY": "fake"}[k] }
		s, err := Resolve(Inputs{Resume: path, Getenv: getenv, Wd: wd, Config: LoadConfig(getenv, "")})
		if err != nil {
			t.Fatal(err)
		}
		if s.Mode.Value != want {
			t.Errorf("carrying on a %s-mode transcript under a config of mode ask: mode %s (%s), want %s", carried, s.Mode.Value, s.Mode.Source, want)
		}
	}
}
