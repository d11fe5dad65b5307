package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

func declaredNames(body []byte) string {
	var names []string
	for _, n := range gjson.GetBytes(body, "tools.#.function.name").Array() {
		names = append(names, n.String())
	}
	return strings.Join(names, ",")
}

func TestSafeRefusesWritesAndExits6(t *testing.T) {
	dir := t.TempDir()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("w", "write_file", `{"path":"out.txt","content":"x"}`),
			fakeprovider.Call("s", "shell", `{"command":"touch pwned"}`),
			fakeprovider.Call("l", "list_directory", `{}`),
		}},
		fakeprovider.Reply{Text: "I could not write"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv, wd: dir}, "--safe", "--json", "write out.txt")
	if r.code != exitRefused {
		t.Fatalf("exit %d, want %d; stderr %s", r.code, exitRefused, r.stderr)
	}
	var got finalJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != "denied" || len(got.Denials) != 2 || got.Denials[0].Name != "write_file" || got.Denials[1].Name != "shell" {
		t.Errorf("status %q denials %+v", got.Status, got.Denials)
	}
	if got.Answer != "I could not write" {
		t.Errorf("answer %q: the run should go on after a refusal", got.Answer)
	}
	for _, f := range []string{"out.txt", "pwned"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was created under --safe", f)
		}
	}
	if d := declaredNames(srv.Requests()[0]); d != "read_file,list_directory,search" {
		t.Errorf("declared %s under --safe, want only read-only tools", d)
	}
	if !strings.Contains(r.stderr, "refused by policy: write_file, shell") {
		t.Errorf("stderr %q", r.stderr)
	}
}

func TestModes(t *testing.T) {
	calls := func(n int) []fakeprovider.Reply {
		var rs []fakeprovider.Reply
		for i := range n {
			rs = append(rs, fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c", "search", `{"pattern":"x`+strings.Repeat("y", i)+`"}`)}})
		}
		return rs
	}
	// ask mode: read-only tools and at most 3 steps whatever --max-steps says.
	srv := fakeprovider.Start(calls(5)...)
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv}, "--mode", "ask", "--max-steps", "8", "q")
	if r.code != exitLimit || len(srv.Requests()) != 3 {
		t.Errorf("ask mode: exit %d after %d requests, want %d after 3", r.code, len(srv.Requests()), exitLimit)
	}
	if d := declaredNames(srv.Requests()[0]); d != "read_file,list_directory,search" {
		t.Errorf("ask mode declared %s", d)
	}
	// plan mode: read-only, and the system prompt asks for a numbered plan.
	srv2 := fakeprovider.Start(fakeprovider.Reply{Text: "1. do it"})
	defer srv2.Close()
	runAsk(t, askEnv{server: srv2}, "--mode", "plan", "q")
	body := srv2.Requests()[0]
	if d := declaredNames(body); d != "read_file,list_directory,search" {
		t.Errorf("plan mode declared %s", d)
	}
	if sys := gjson.GetBytes(body, "messages.0.content").String(); !strings.Contains(sys, "numbered plan") {
		t.Errorf("plan mode system prompt lacks its guidance: %s", sys)
	}
	if r := runAsk(t, askEnv{}, "--mode", "yolo", "q"); r.code != exitUsage || !strings.Contains(r.stderr, "choose ask, plan or agent") {
		t.Errorf("bad mode: exit %d stderr %q", r.code, r.stderr)
	}
}

func TestPlanFileIsTheGoal(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plan.md"), []byte("1. Read go.mod\n2. Report the module path\n"), 0o644)
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv, wd: dir}, "--plan", "plan.md", "be brief")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	prompt := gjson.GetBytes(srv.Requests()[0], "messages.1.content").String()
	if !strings.Contains(prompt, "Carry out this plan") || !strings.Contains(prompt, "2. Report the module path") || !strings.HasSuffix(prompt, "be brief") {
		t.Errorf("prompt = %q", prompt)
	}
	if r := runAsk(t, askEnv{wd: dir}, "--mode", "plan", "--plan", "plan.md"); r.code != exitUsage {
		t.Errorf("--plan with --mode plan: exit %d, want 2", r.code)
	}
}

func TestDenyToolIsNotDeclared(t *testing.T) {
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("r", "read_file", `{"path":"x"}`)}},
		fakeprovider.Reply{Text: "ok"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv}, "--deny-tool", "read_file", "--deny-tool", "shell:rm *", "--json", "q")
	if d := declaredNames(srv.Requests()[0]); strings.Contains(d, "read_file") || !strings.Contains(d, "shell") {
		t.Errorf("declared %s: read_file denied outright is hidden, shell with an argument pattern stays", d)
	}
	var got finalJSON
	json.Unmarshal([]byte(r.stdout), &got)
	if r.code != 0 || len(got.Denials) != 1 || !strings.Contains(got.Denials[0].Reason, "--deny-tool read_file") {
		t.Errorf("exit %d denials %+v: a denied call is answered and listed, and is not a --safe refusal", r.code, got.Denials)
	}
}
