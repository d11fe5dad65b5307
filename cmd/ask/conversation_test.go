package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// conversationEnv runs ask with its state in a temporary directory.
func conversationEnv(t *testing.T, srv *fakeprovider.Server) (askEnv, string) {
	state := t.TempDir()
	return askEnv{server: srv, wd: t.TempDir(), env: map[string]string{"XDG_STATE_HOME": state}}, filepath.Join(state, "ask", "last.jsonl")
}

// roles lists a request's messages as role:content, tool calls as
// role:call(name).
func roles(body []byte) []string {
	var out []string
	for _, m := range gjson.GetBytes(body, "messages").Array() {
		s := m.Get("role").String() + ":"
		if m.Get("role").String() == "system" {
			s += "…"
		} else if calls := m.Get("tool_calls"); calls.Exists() {
			s += "call(" + calls.Get("0.function.name").String() + ")"
		} else {
			s += m.Get("content").String()
		}
		out = append(out, s)
	}
	return out
}

func TestContinue(t *testing.T) {
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}},
		fakeprovider.Reply{Text: "the directory is empty"},
		fakeprovider.Reply{Text: "yes, empty"},
		fakeprovider.Reply{Text: "third"})
	defer srv.Close()
	e, last := conversationEnv(t, srv)

	if r := runAsk(t, e, "-m", "gpt-test-1", "--mode", "ask", "what is here?"); r.code != 0 {
		t.Fatalf("first run: code %d stderr %s", r.code, r.stderr)
	}
	if _, err := os.Stat(last); err != nil {
		t.Fatalf("the first run was not kept: %v", err)
	}
	r := runAsk(t, e, "-c", "are you sure?")
	if r.code != 0 || r.stdout != "yes, empty\n" {
		t.Fatalf("continued run: code %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	want := []string{"system:…", "user:what is here?", "assistant:call(list_directory)", "tool:(empty directory)", "assistant:the directory is empty", "user:are you sure?"}
	got := roles(reqs[2])
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("continued request messages:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if m := gjson.GetBytes(reqs[2], "model").String(); m != "gpt-test-1" {
		t.Errorf("continued with model %q, want the first run's", m)
	}
	// The first run was in ask mode: its tools are read-only, and so are
	// the continued run's.
	for _, name := range gjson.GetBytes(reqs[2], "tools.#.function.name").Array() {
		if n := name.String(); n == "write_file" || n == "run_shell" || n == "edit_file" {
			t.Errorf("continued run offers %s, which ask mode does not", n)
		}
	}
	events, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	start := gjson.Parse(strings.SplitN(string(events), "\n", 2)[0])
	if start.Get("mode").String() != "ask" || len(start.Get("settings.history").Array()) != 4 {
		t.Errorf("continued run.started = %s", start.Raw)
	}

	// A flag overrides what is carried over; the chain goes on from the
	// continued run, which holds the whole conversation.
	r = runAsk(t, e, "-c", "-m", "gpt-test-2", "and now?")
	if r.code != 0 {
		t.Fatalf("third run: code %d stderr %s", r.code, r.stderr)
	}
	third := srv.Requests()[3]
	if m := gjson.GetBytes(third, "model").String(); m != "gpt-test-2" {
		t.Errorf("third run model %q, want the flag's", m)
	}
	if got := roles(third); len(got) != 8 || got[6] != "assistant:yes, empty" || got[7] != "user:and now?" {
		t.Errorf("third request messages: %q", got)
	}
}

func TestResumeAndReplay(t *testing.T) {
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "first answer"}, fakeprovider.Reply{Text: "second answer"})
	defer srv.Close()
	e, _ := conversationEnv(t, srv)
	first := filepath.Join(e.wd, "first.jsonl")
	second := filepath.Join(e.wd, "second.jsonl")
	if r := runAsk(t, e, "--no-tools", "--transcript", first, "one"); r.code != 0 {
		t.Fatalf("first run: %d %s", r.code, r.stderr)
	}
	r := runAsk(t, e, "--resume", "first.jsonl", "--transcript", second, "two")
	if r.code != 0 || r.stdout != "second answer\n" {
		t.Fatalf("resumed run: code %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	body := srv.Requests()[1]
	if got := roles(body); strings.Join(got, "|") != "system:…|user:one|assistant:first answer|user:two" {
		t.Errorf("resumed request messages: %q", got)
	}
	if gjson.GetBytes(body, "tools").Exists() {
		t.Errorf("the first run had no tools, the resumed one declares some: %s", gjson.GetBytes(body, "tools").Raw)
	}
	// Replaying the resumed run sends the same requests, history included.
	rp := runAsk(t, askEnv{wd: e.wd}, "replay", "--check", second)
	if rp.code != 0 || rp.stdout != "second answer\n" {
		t.Errorf("replay --check of a resumed run: code %d stdout %q stderr %s", rp.code, rp.stdout, rp.stderr)
	}
}

func TestContinueErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "unfinished.jsonl"), []byte(`{"type":"run.started","provider":"openai","settings":{"prompt":"x","system":"","max_steps":8,"timeout":"5m","stream":true,"tools":[]}}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "garbage.jsonl"), []byte("not json\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "openai.jsonl"), []byte(`{"type":"run.started","provider":"openai","model":"gpt-4o-mini","settings":{"prompt":"x","system":"","max_steps":8,"timeout":"5m","stream":true,"tools":[]}}`+"\n"+
		`{"type":"run.finished","status":"completed","answer":"y","history":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`+"\n"), 0o644)
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
	}{
		{"no earlier run", env, []string{"-c", "q"}, "--continue: there is no earlier run to continue"},
		{"nowhere to look", map[string]string{}, []string{"-c", "q"}, "set XDG_STATE_HOME or HOME"},
		{"both flags", env, []string{"-c", "--resume", "openai.jsonl", "q"}, "choose one"},
		{"missing file", env, []string{"--resume", "nope.jsonl", "q"}, "--resume nope.jsonl: open"},
		{"not a transcript", env, []string{"--resume", "garbage.jsonl", "q"}, "--resume garbage.jsonl: transcript line 1"},
		{"unfinished run", env, []string{"--resume", "unfinished.jsonl", "q"}, "the run did not finish"},
		{"other protocol", env, []string{"--resume", "openai.jsonl", "-p", "anthropic", "q"}, "held with openai (openai protocol) and cannot go on with anthropic (anthropic protocol)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAsk(t, askEnv{env: tt.env, wd: dir}, tt.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("code %d stderr %q, want 2 and %q", r.code, r.stderr, tt.wantErr)
			}
		})
	}
}

func TestLastTranscriptPath(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/ask/last.jsonl"},
		{map[string]string{"HOME": "/h"}, "/h/.local/state/ask/last.jsonl"},
		{map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/h"}, "/h/.local/state/ask/last.jsonl"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		if got := lastTranscriptPath(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("lastTranscriptPath(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

// TestLastRunIsWholeOrAbsent checks that a kept run replaces the earlier
// one only when it is complete, and that no temporary files are left.
func TestLastRunIsWholeOrAbsent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ask", "last.jsonl")
	a, err := openLastRun(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := openLastRun(path)
	a.writer().Write([]byte("a1\n"))
	b.writer().Write([]byte("b1\n"))
	a.writer().Write([]byte("a2\n"))
	if _, err := os.Stat(path); err == nil {
		t.Fatal("last.jsonl exists before any run finished")
	}
	if err := a.commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "a1\na2\n" {
		t.Errorf("after a: %q", got)
	}
	b.commit()
	if got, _ := os.ReadFile(path); string(got) != "b1\n" {
		t.Errorf("after b: %q", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("last.jsonl mode %v, want 0600: it holds prompts and answers", info.Mode().Perm())
	}
	var none *lastRun
	if none.writer() != nil || none.commit() != nil {
		t.Error("a nil lastRun is not a no-op")
	}
}

// FuzzParseConversation: any transcript bytes give a conversation with a
// history, or an error; never a panic.
func FuzzParseConversation(f *testing.F) {
	f.Add([]byte(`{"type":"run.started","provider":"openai","settings":{"tools":["read_file"]}}` + "\n" +
		`{"type":"run.finished","history":[{"role":"user","content":"x"}]}` + "\n"))
	f.Add([]byte(`{"type":"run.started"}` + "\n" + `{"type":"run.finished"}`))
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseConversation(data)
		if err == nil && len(p.history) == 0 {
			t.Fatalf("accepted a conversation without history: %q", data)
		}
	})
}
