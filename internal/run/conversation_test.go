package run

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/runtest"
)

// FuzzParseConversation: any transcript bytes give a conversation with a
// history, or an error; never a panic.
func FuzzParseConversation(f *testing.F) {
	f.Add([]byte(`{"type":"run.started","provider":"openai","settings":{"tools":["read_file"]}}` + "\n" +
		`{"type":"run.finished","history":[{"role":"user","content":"x"}]}` + "\n"))
	f.Add([]byte(`{"type":"run.started"}` + "\n" + `{"type":"run.finished"}`))
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseConversation(data)
		if err == nil && len(p.History) == 0 {
			t.Fatalf("accepted a conversation without history: %q", data)
		}
	})
}

// runStarted is the run.started event of the last run kept for -c.
func runStarted(t *testing.T, dir string) gjson.Result {
	t.Helper()
	data, err := os.ReadFile(runtest.NewestRun(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	return gjson.Parse(first)
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
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}},
		fakeprovider.Reply{Text: "the directory is empty"},
		fakeprovider.Reply{Text: "yes, empty"},
		fakeprovider.Reply{Text: "third"})
	defer srv.Close()
	w := newWorld(t, srv)
	last := w.runsDir()

	if r := w.ask("what is here?", "model", "gpt-test-1", "mode", "ask"); r.code != 0 {
		t.Fatalf("first run: code %d stderr %s", r.code, r.stderr)
	}
	if _, err := os.Stat(runtest.NewestRun(t, last)); err != nil {
		t.Fatalf("the first run was not kept: %v", err)
	}
	r := w.ask("are you sure?", "continue", true)
	if r.code != 0 || r.answer() != "yes, empty\n" {
		t.Fatalf("continued run: code %d answer %q stderr %s", r.code, r.answer(), r.stderr)
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
	const readOnly = "read_file,list_directory,search"
	if got := declaredNames(reqs[0]); got != readOnly {
		t.Errorf("first run in ask mode declared %s, want %s", got, readOnly)
	}
	if got := declaredNames(reqs[2]); got != readOnly {
		t.Errorf("continued run declared %s, want the first run's %s", got, readOnly)
	}
	start := runStarted(t, last)
	if start.Get("mode").String() != "ask" || len(start.Get("settings.history").Array()) != 4 {
		t.Errorf("continued run.started = %s", start.Raw)
	}

	// A flag overrides what is carried over; the chain goes on from the
	// continued run, which holds the whole conversation.
	r = w.ask("and now?", "continue", true, "model", "gpt-test-2")
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

// mcpScript writes a minimal MCP server, a shell script answering
// initialize and tools/list over stdio with one tool, and returns the
// --mcp value that starts it. It stands in for the npm servers, which the
// tests of continuation do not need: only the server's start and its tool
// list matter here.
func mcpScript(t *testing.T, dir, server, tool string) string {
	t.Helper()
	script := `while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case $line in
  *'"method":"initialize"'*)
    v=$(printf '%s\n' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
    printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"SERVER","version":"1"}}}\n' "$id" "$v";;
  *'"method":"tools/list"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"TOOL","description":"test tool","inputSchema":{"type":"object"}}]}}\n' "$id";;
  *'"method":"ping"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id";;
  esac
done
`
	script = strings.NewReplacer("SERVER", server, "TOOL", tool).Replace(script)
	path := filepath.Join(dir, server+".sh")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return "/bin/sh " + path
}

// yes is a person at the terminal who answers yes.
func yes(string) bool { return true }

// no is a person at the terminal who answers no.
func no(string) bool { return false }

// TestContinueTakesUserToolsOnlyWhenTold: a transcript is a file anyone
// may have edited, so -c never starts the programs it names (an MCP
// server, a tools file's commands) on its word alone. Without a terminal
// the run goes on without them and says which flags bring them back; the
// flags, or a yes on the terminal, do.
func TestContinueTakesUserToolsOnlyWhenTold(t *testing.T) {
	if testing.Short() {
		t.Skip("starts eight MCP servers (about 1.5 s)")
	}
	t.Parallel()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("the test MCP server is a /bin/sh script")
	}
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "1"}, fakeprovider.Reply{Text: "2"}, fakeprovider.Reply{Text: "3"},
		fakeprovider.Reply{Text: "4"}, fakeprovider.Reply{Text: "5"}, fakeprovider.Reply{Text: "6"})
	defer srv.Close()
	w := newWorld(t, srv)
	last := w.runsDir()
	scripts := t.TempDir()
	greeter, waver := mcpScript(t, scripts, "greeter", "hello"), mcpScript(t, scripts, "waver", "wave")
	runtest.ToolsFile(t, filepath.Join(w.wd, "tools.json"), "hello_file")
	const builtins = "read_file,list_directory,search,edit_file,write_file,shell"

	if r := w.ask("one", "tools-file", "tools.json", "mcp", greeter); r.code != 0 {
		t.Fatalf("first run: code %d stderr %s", r.code, r.stderr)
	}
	if got, want := declaredNames(srv.Requests()[0]), builtins+",hello_file,greeter__hello"; got != want {
		t.Fatalf("first run declared %s, want %s", got, want)
	}
	set := runStarted(t, last).Get("settings")
	absTools := filepath.Join(w.wd, "tools.json")
	if got := set.Get("tools_file").String(); got != absTools {
		t.Errorf("recorded tools_file %q, want the absolute %q", got, absTools)
	}
	if got := set.Get("mcp").Raw; got != fmt.Sprintf("[%q]", greeter) {
		t.Errorf("recorded mcp %s, want [%q]", got, greeter)
	}

	// From another directory, with no terminal: nothing the transcript
	// names is started, and stderr says how to start it.
	wd := w.wd
	w.wd = t.TempDir()
	r := w.ask("two", "continue", true, "workdir", wd)
	if r.code != 0 {
		t.Fatalf("continued run: code %d stderr %s", r.code, r.stderr)
	}
	if got := declaredNames(srv.Requests()[1]); got != builtins {
		t.Errorf("continued run declared %s, want the built-ins only", got)
	}
	if want := fmt.Sprintf("give --tools-file %s --mcp '%s'", absTools, greeter); !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not say %q", r.stderr, want)
	}

	// The flags bring them back, each its own.
	if r := w.ask("three", "continue", true, "workdir", wd, "tools-file", absTools, "mcp", greeter); r.code != 0 {
		t.Fatalf("run with the flags: code %d stderr %s", r.code, r.stderr)
	}
	if got, want := declaredNames(srv.Requests()[2]), builtins+",hello_file,greeter__hello"; got != want {
		t.Errorf("with the flags declared %s, want %s", got, want)
	}
	if r := w.ask("four", "continue", true, "workdir", wd, "mcp", waver); r.code != 0 {
		t.Fatalf("run with --mcp: code %d stderr %s", r.code, r.stderr)
	}
	if got, want := declaredNames(srv.Requests()[3]), builtins+",waver__wave"; got != want {
		t.Errorf("with --mcp declared %s, want %s", got, want)
	}

	// A yes on the terminal brings back what the transcript names.
	w.confirm = yes
	if r := w.ask("five", "continue", true, "workdir", wd, "mcp", greeter, "tools-file", absTools); r.code != 0 {
		t.Fatalf("fifth run: code %d stderr %s", r.code, r.stderr)
	}
	if r := w.ask("six", "continue", true, "workdir", wd); r.code != 0 {
		t.Fatalf("confirmed run: code %d stderr %s", r.code, r.stderr)
	}
	if got, want := declaredNames(srv.Requests()[5]), builtins+",hello_file,greeter__hello"; got != want {
		t.Errorf("confirmed on the terminal declared %s, want %s", got, want)
	}

	w.confirm = nil
	if r := w.ask("seven", "continue", true, "workdir", wd, "no-tools", true); r.code == 0 {
		if set := runStarted(t, last).Get("settings"); set.Get("tools_file").Exists() || set.Get("mcp").Exists() {
			t.Errorf("a run with --no-tools recorded tools to carry on with: %s", set.Raw)
		}
	}
}

// TestContinueCarriesToolProtocol: a conversation held over the JSON text
// protocol goes on over it, unless --tool-protocol says otherwise.
func TestContinueCarriesToolProtocol(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "1"}, fakeprovider.Reply{Text: "2"}, fakeprovider.Reply{Text: "3"})
	defer srv.Close()
	w := newWorld(t, srv)
	last := w.runsDir()
	// The text protocol declares no tools to the API and teaches its form
	// in the system prompt instead.
	textProtocol := func(body []byte) bool {
		return !gjson.GetBytes(body, "tools").Exists() && strings.Contains(gjson.GetBytes(body, "messages.0.content").String(), `"terminate"`)
	}
	if r := w.ask("one", "tool-protocol", "json"); r.code != 0 {
		t.Fatalf("first run: code %d stderr %s", r.code, r.stderr)
	}
	if !textProtocol(srv.Requests()[0]) {
		t.Fatalf("--tool-protocol json sent native tools: %.300s", srv.Requests()[0])
	}
	if got := runStarted(t, last).Get("settings.tool_protocol").String(); got != "json" {
		t.Errorf("recorded tool_protocol %q, want json", got)
	}
	if r := w.ask("two", "continue", true); r.code != 0 {
		t.Fatalf("continued run: code %d stderr %s", r.code, r.stderr)
	}
	if !textProtocol(srv.Requests()[1]) {
		t.Errorf("the continued run left the JSON text protocol: %.300s", srv.Requests()[1])
	}
	if r := w.ask("three", "continue", true, "tool-protocol", "native"); r.code != 0 {
		t.Fatalf("run with --tool-protocol native: code %d stderr %s", r.code, r.stderr)
	}
	if textProtocol(srv.Requests()[2]) || declaredNames(srv.Requests()[2]) == "" {
		t.Errorf("--tool-protocol native did not declare native tools: %.300s", srv.Requests()[2])
	}
}

// TestContinueCarriesSafe: a --safe conversation stays safe (calls that
// write are refused, exit 6) until --safe=false.
func TestContinueCarriesSafe(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Text: "1"},
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("w", "write_file", `{"path":"out.txt","content":"x"}`)}},
		fakeprovider.Reply{Text: "I could not write"},
		fakeprovider.Reply{Text: "3"})
	defer srv.Close()
	w := newWorld(t, srv)
	last := w.runsDir()
	if r := w.ask("one", "safe", true); r.code != 0 {
		t.Fatalf("first run: code %d stderr %s", r.code, r.stderr)
	}
	if got := runStarted(t, last).Get("settings.safe").Bool(); !got {
		t.Error("run.started does not record --safe")
	}
	r := w.ask("write out.txt", "continue", true)
	if r.code != fault.ExitRefused || !strings.Contains(r.stderr, "refused by policy: write_file") {
		t.Errorf("continued run: code %d stderr %q, want %d and the refusal", r.code, r.stderr, fault.ExitRefused)
	}
	if _, err := os.Stat(filepath.Join(w.wd, "out.txt")); err == nil {
		t.Error("the continued run wrote out.txt")
	}
	if got := declaredNames(srv.Requests()[1]); got != "read_file,list_directory,search" {
		t.Errorf("continued run declared %s, want the read-only tools --safe offers", got)
	}
	if r := w.ask("three", "continue", true, "safe", false); r.code != 0 {
		t.Fatalf("run with --safe=false: code %d stderr %s", r.code, r.stderr)
	}
	if got := declaredNames(srv.Requests()[3]); !strings.HasSuffix(got, ",shell") {
		t.Errorf("with --safe=false declared %s, want every tool", got)
	}
	if runStarted(t, last).Get("settings.safe").Exists() {
		t.Error("a run with --safe=false recorded safe")
	}
}

// TestContinueAsksBeforeTheEarlierEndpoint: a conversation is not sent,
// with the key, to the endpoint a transcript names on the file's word:
// without a terminal it goes where this run's settings say (here
// ASK_BASE_URL) and stderr says how to go back; --base-url, or a yes on the
// terminal, sends it to the recorded endpoint.
func TestContinueAsksBeforeTheEarlierEndpoint(t *testing.T) {
	t.Parallel()
	held := fakeprovider.Start(fakeprovider.Reply{Text: "1"}, fakeprovider.Reply{Text: "3"}, fakeprovider.Reply{Text: "4"})
	defer held.Close()
	elsewhere := fakeprovider.Start(fakeprovider.Reply{Text: "2"}, fakeprovider.Reply{Text: "5"})
	defer elsewhere.Close()
	w := newWorld(t, elsewhere) // ASK_BASE_URL is elsewhere's
	last := w.runsDir()
	if r := w.ask("one", "base-url", held.URL); r.code != 0 {
		t.Fatalf("first run: code %d stderr %s", r.code, r.stderr)
	}
	if got := runStarted(t, last).Get("settings.base_url").String(); got != held.URL {
		t.Errorf("recorded base_url %q, want %q", got, held.URL)
	}
	r := w.ask("two", "continue", true)
	if r.code != 0 || r.answer() != "2\n" || !strings.Contains(r.stderr, "give --base-url "+held.URL) {
		t.Fatalf("continued run: code %d answer %q stderr %s", r.code, r.answer(), r.stderr)
	}
	if r := w.ask("three", "continue", true, "base-url", held.URL); r.code != 0 || r.answer() != "3\n" {
		t.Fatalf("run with --base-url: code %d answer %q stderr %s", r.code, r.answer(), r.stderr)
	}
	// The last run was held at held.URL again: a yes keeps it there...
	w.confirm = yes
	if r := w.ask("four", "continue", true); r.code != 0 || r.answer() != "4\n" {
		t.Fatalf("confirmed run: code %d answer %q stderr %s", r.code, r.answer(), r.stderr)
	}
	// ...and a no sends it where this run's settings say.
	w.confirm = no
	if r := w.ask("five", "continue", true); r.code != 0 || r.answer() != "5\n" {
		t.Fatalf("declined run: code %d answer %q stderr %s", r.code, r.answer(), r.stderr)
	}
	if n, m := len(held.Requests()), len(elsewhere.Requests()); n != 3 || m != 2 {
		t.Errorf("requests: %d to the recorded endpoint, %d to ASK_BASE_URL; want 3 and 2", n, m)
	}
	if got := roles(held.Requests()[2]); len(got) < 2 || got[len(got)-1] != "user:four" {
		t.Errorf("the confirmed conversation sent %q", got)
	}
}

// TestContinueRunsOnlyOfferedTools: a continued run offers the earlier
// run's tools, and a call to one it does not offer is an unknown tool,
// not run, even with --yes.
func TestContinueRunsOnlyOfferedTools(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("w", "write_file", `{"path":"out.txt","content":"x"}`)}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	w := newWorld(t, srv)
	transcript := `{"type":"run.started","provider":"openai","model":"gpt-test","mode":"agent","settings":{"prompt":"x","system":"","max_steps":8,"timeout":"5m","stream":true,"tools":["read_file"]}}` + "\n" +
		`{"type":"run.finished","status":"completed","answer":"y","history":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}` + "\n"
	if err := os.WriteFile(filepath.Join(w.wd, "read-only.jsonl"), []byte(transcript), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := w.ask("write out.txt", "resume", "read-only.jsonl", "yes", true); r.code != 0 {
		t.Fatalf("resumed run: code %d stderr %s", r.code, r.stderr)
	}
	if got := declaredNames(srv.Requests()[0]); got != "read_file" {
		t.Errorf("resumed run declared %s, want the earlier run's read_file", got)
	}
	if _, err := os.Stat(filepath.Join(w.wd, "out.txt")); err == nil {
		t.Error("write_file ran, though the resumed run does not offer it")
	}
	if got := gjson.GetBytes(srv.Requests()[1], `messages.#(role=="tool").content`).String(); !strings.Contains(got, `unknown tool "write_file"`) {
		t.Errorf("the call was answered with %q, want an unknown tool", got)
	}
}

func TestResumeAndReplay(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "first answer"}, fakeprovider.Reply{Text: "second answer"})
	defer srv.Close()
	w := newWorld(t, srv)
	first := filepath.Join(w.wd, "first.jsonl")
	second := filepath.Join(w.wd, "second.jsonl")
	if r := w.ask("one", "no-tools", true, "transcript", first); r.code != 0 {
		t.Fatalf("first run: %d %s", r.code, r.stderr)
	}
	r := w.ask("two", "resume", "first.jsonl", "transcript", second)
	if r.code != 0 || r.answer() != "second answer\n" {
		t.Fatalf("resumed run: code %d answer %q stderr %s", r.code, r.answer(), r.stderr)
	}
	body := srv.Requests()[1]
	if got := roles(body); strings.Join(got, "|") != "system:…|user:one|assistant:first answer|user:two" {
		t.Errorf("resumed request messages: %q", got)
	}
	if gjson.GetBytes(body, "tools").Exists() {
		t.Errorf("the first run had no tools, the resumed one declares some: %s", gjson.GetBytes(body, "tools").Raw)
	}
	// Replaying the resumed run sends the same requests, history included.
	srv.Close()
	rp := (&world{t: t, wd: w.wd, vars: map[string]string{}}).replay(second, ReplayOptions{})
	if rp.code != 0 || rp.answer() != "second answer\n" || rp.diffs != "" {
		t.Errorf("replay --check of a resumed run: code %d answer %q stderr %s\n%s", rp.code, rp.answer(), rp.stderr, rp.diffs)
	}
}

func TestContinueErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "unfinished.jsonl"), []byte(`{"type":"run.started","provider":"openai","settings":{"prompt":"x","system":"","max_steps":8,"timeout":"5m","stream":true,"tools":[]}}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "garbage.jsonl"), []byte("not json\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "openai.jsonl"), []byte(`{"type":"run.started","provider":"openai","model":"gpt-4o-mini","settings":{"prompt":"x","system":"","max_steps":8,"timeout":"5m","stream":true,"tools":[]}}`+"\n"+
		`{"type":"run.finished","status":"completed","answer":"y","history":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`+"\n"), 0o644)
	vars := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "OPENAI_API_KEY": "fake-test", "ANTHROPIC_API_KEY": "fake-ant-test"}
	tests := []struct {
		name    string
		vars    map[string]string
		flags   []any
		wantErr string
	}{
		{"no earlier run", vars, []any{"continue", true}, "--continue: no earlier run in "},
		{"nowhere to look", map[string]string{}, []any{"continue", true}, "set XDG_STATE_HOME or HOME"},
		{"both flags", vars, []any{"continue", true, "resume", "openai.jsonl"}, "choose one"},
		{"missing file", vars, []any{"resume", "nope.jsonl"}, "--resume nope.jsonl: open"},
		{"not a transcript", vars, []any{"resume", "garbage.jsonl"}, "--resume garbage.jsonl: transcript line 1"},
		{"unfinished run", vars, []any{"resume", "unfinished.jsonl"}, "the run did not finish"},
		{"other protocol", vars, []any{"resume", "openai.jsonl", "provider", "anthropic"}, "held with openai (openai protocol) and cannot go on with anthropic (anthropic protocol)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &world{t: t, wd: dir, vars: tt.vars}
			r := w.ask("q", tt.flags...)
			if r.code != fault.ExitUsage || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("code %d stderr %q, want 2 and %q", r.code, r.stderr, tt.wantErr)
			}
		})
	}
}

// TestResumeOfAnEditedTranscript: a transcript edited to name a program
// as an MCP server and a collector as the endpoint starts nothing and
// sends the key nowhere, when resumed without a terminal.
func TestResumeOfAnEditedTranscript(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "1"}, fakeprovider.Reply{Text: "2"})
	defer srv.Close()
	var collected []string
	var mu sync.Mutex
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		collected = append(collected, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "collected", http.StatusTeapot)
	}))
	defer collector.Close()
	w := newWorld(t, srv)
	if r := w.ask("one"); r.code != 0 {
		t.Fatalf("first run: code %d stderr %s", r.code, r.stderr)
	}
	data, err := os.ReadFile(runtest.NewestRun(t, w.runsDir()))
	if err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(t.TempDir(), "PWNED")
	first, rest, _ := strings.Cut(string(data), "\n")
	first, _ = sjson.Set(first, "settings.mcp", []string{"sh -c 'touch " + planted + "'"})
	first, _ = sjson.Set(first, "settings.base_url", collector.URL)
	edited := first + "\n" + rest
	file := filepath.Join(t.TempDir(), "shared.jsonl")
	if err := os.WriteFile(file, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	r := w.ask("two", "resume", file)
	if r.code != 0 || r.answer() != "2\n" {
		t.Errorf("resumed run: code %d answer %q stderr %s", r.code, r.answer(), r.stderr)
	}
	if _, err := os.Stat(planted); err == nil {
		t.Error("the MCP command named by the transcript ran")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(collected) > 0 {
		t.Errorf("the key was sent to the transcript's endpoint: %q", collected)
	}
	if !strings.Contains(r.stderr, "give --base-url "+collector.URL) {
		t.Errorf("stderr does not say how to use the recorded endpoint: %q", r.stderr)
	}
}

// TestAsksOwnFilesAreOutOfReach: a model working in $HOME cannot read
// ask's config, find or rewrite the run's own transcript, or plant a
// conversation for the next -c.
func TestAsksOwnFilesAreOutOfReach(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".config", "ask"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "ask", "config.json"), []byte(`{"mode":"agent"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(home, "run.jsonl")
	planted := `{"type":"run.started","provider":"openai","settings":{"mcp":["sh -c 'touch PWN'"]}}`
	calls := []providers.ToolCall{
		fakeprovider.Call("1", "read_file", `{"path":".config/ask/config.json"}`),
		fakeprovider.Call("2", "list_directory", `{"path":".local/state/ask"}`),
		fakeprovider.Call("3", "write_file", fmt.Sprintf(`{"path":".local/state/ask/last.jsonl","content":%q}`, planted)),
		fakeprovider.Call("4", "write_file", `{"path":"run.jsonl","content":"{}"}`),
		fakeprovider.Call("5", "search", `{"pattern":"mode"}`),
	}
	srv := fakeprovider.Start(fakeprovider.Reply{Calls: calls}, fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	w := newWorld(t, srv)
	w.wd = home
	delete(w.vars, "XDG_STATE_HOME")
	w.with("HOME", home)
	r := w.ask("go", "yes", true, "transcript", transcript)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	out := r.summary()
	for _, c := range out.ToolCalls[:4] {
		if !c.IsError || !strings.Contains(c.Content, "ask's own") {
			t.Errorf("%s %s reached ask's own file: %q", c.Name, c.Arguments, c.Content)
		}
	}
	if strings.Contains(out.ToolCalls[4].Content, "config.json") || strings.Contains(out.ToolCalls[4].Content, ".local/state") {
		t.Errorf("search looked into ask's own files: %q", out.ToolCalls[4].Content)
	}
	last, err := os.ReadFile(runtest.NewestRun(t, filepath.Join(home, ".local", "state", "ask", "runs")))
	if err != nil || strings.HasPrefix(string(last), planted) || !strings.Contains(string(last), `"prompt":"go"`) || !strings.Contains(string(last), `"run.finished"`) {
		t.Errorf("the kept run is not this run's own record: %v %.200s", err, last)
	}
	if kept, _ := os.ReadFile(transcript); !strings.Contains(string(kept), `"run.finished"`) {
		t.Errorf("the --transcript file was overwritten: %.200s", kept)
	}
}
