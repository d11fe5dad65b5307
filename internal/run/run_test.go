package run

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/settings"
)

// testEnv is a world with no environment but vars.
func testEnv(t *testing.T, vars map[string]string) Env {
	return Env{
		Getenv:  env(vars),
		Environ: func() []string { return nil },
		HTTP:    &http.Client{Timeout: 30 * time.Second},
		Now:     func() time.Time { return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) },
		Wd:      t.TempDir(),
		Version: "test",
	}
}

// A run built from Settings alone (no CLI) executes against the fake
// provider, really runs its tool, and writes a transcript from run.started
// to run.finished; replaying that transcript through the same constructor
// makes the same requests, checked as `ask replay --check` checks them.
func TestRunFromSettingsThenReplayIt(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "read_file", `{"path":"notes.txt"}`)}},
		fakeprovider.Reply{Text: "The note says hello."},
	)
	defer srv.Close()
	e := testEnv(t, map[string]string{"OPENAI_API_KEY": "fake-test-key-0000"})
	if err := os.WriteFile(filepath.Join(e.Wd, "notes.txt"), []byte("hello from the note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: Settings{Values: settings.Values{Provider: Given("openai", "test"), BaseURL: Given(srv.URL, "test"), Mode: Given("ask", "test")}}})
	if err != nil {
		t.Fatal(err)
	}
	transcript := execute(t, s, e, "what does notes.txt say?", func(res *Result) {
		if res.Status != loop.StatusCompleted || res.Answer != "The note says hello." || res.ExitCode != 0 {
			t.Fatalf("run: status %s, answer %q, exit %d", res.Status, res.Answer, res.ExitCode)
		}
		if len(res.Calls) != 1 || !strings.Contains(res.Calls[0].Content, "hello from the note") {
			t.Fatalf("the tool did not run for real: %+v", res.Calls)
		}
	})
	events, err := records.Read(bytes.NewReader(transcript))
	if err != nil {
		t.Fatal(err)
	}
	first, last := events[0], events[len(events)-1]
	if first.Type != records.TypeRunStarted || last.Type != records.TypeRunFinished || last.ExitCode != 0 {
		t.Fatalf("transcript runs from %s to %s (exit %d)", first.Type, last.Type, last.ExitCode)
	}
	if first.Mode != "ask" || first.Settings.MaxSteps != 3 || strings.Contains(string(transcript), "fake-test-key") {
		t.Errorf("run.started: mode %s, max steps %d, or the key is in the transcript", first.Mode, first.Settings.MaxSteps)
	}

	// The replay needs no key and no network: the fake is closed.
	srv.Close()
	replayed, prompt, rp, err := FromTranscript(events, ReplayOptions{Check: true, Workdir: e.Wd})
	if err != nil {
		t.Fatal(err)
	}
	re := testEnv(t, nil)
	re.Wd, re.Replay = e.Wd, rp
	execute(t, replayed, re, prompt, func(res *Result) {
		if res.Status != loop.StatusCompleted || res.Answer != "The note says hello." {
			t.Fatalf("replay: status %s, answer %q, err %v", res.Status, res.Answer, res.Err)
		}
	})
	if diffs := rp.Report(); diffs != "" {
		t.Errorf("the replay's requests differ from the recorded ones:\n%s", diffs)
	}
}

// An edited transcript is caught by the check.
func TestReplayCheckSeesAnEditedPrompt(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "42"})
	defer srv.Close()
	e := testEnv(t, map[string]string{"OPENAI_API_KEY": "fake-test-key-0000"})
	s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: Settings{Values: settings.Values{Provider: Given("openai", "test"), BaseURL: Given(srv.URL, "test")}}})
	if err != nil {
		t.Fatal(err)
	}
	transcript := execute(t, s, e, "what is six times seven?", nil)
	edited := bytes.Replace(transcript, []byte("six times seven"), []byte("seven times six"), 1)
	events, err := records.Read(bytes.NewReader(edited))
	if err != nil {
		t.Fatal(err)
	}
	replayed, prompt, rp, err := FromTranscript(events, ReplayOptions{Check: true, Workdir: e.Wd})
	if err != nil {
		t.Fatal(err)
	}
	re := testEnv(t, nil)
	re.Replay = rp
	execute(t, replayed, re, prompt, nil)
	if diffs := rp.Report(); !strings.Contains(diffs, "request 1") {
		t.Errorf("an edited prompt went unnoticed: %q", diffs)
	}
}

// execute builds the run of s in e, runs it on prompt, hands the result to
// check, and returns the transcript.
func execute(t *testing.T, s Settings, e Env, prompt string, check func(*Result)) []byte {
	t.Helper()
	r, err := New(context.Background(), s, e)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var transcript bytes.Buffer
	res := r.Execute(context.Background(), prompt, Output{
		Sinks: []io.Writer{&transcript},
	})
	if res.WriteErr != nil {
		t.Fatal(res.WriteErr)
	}
	if check != nil {
		check(res)
	}
	return transcript.Bytes()
}
