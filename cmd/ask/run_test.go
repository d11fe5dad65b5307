package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/runtest"
	"github.com/ask-cli/ask/internal/term/termtest"
)

// The run's behaviour is internal/run's to test; these tests are of how
// the main command shows it (run.go): the answer on stdout or not, what
// stderr says, the exit code, and the terminal's answers wired to the run.

// An answer that does not match --schema is not data: stdout gets nothing
// and stderr one line; a valid one is printed as it is.
func TestSchemaAnswerOnStdout(t *testing.T) {
	t.Parallel()
	const schema = `{"type":"object","properties":{"pop":{"type":"integer"}},"required":["pop"]}`
	bad := fakeprovider.Reply{Text: `{"pop":"many"}`}
	srv := fakeprovider.Start(bad, bad, bad)
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv}, "--schema", schema, "q")
	if r.code != exitLimit || r.stdout != "" || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || !strings.Contains(r.stderr, "did not match the schema") {
		t.Errorf("never valid: exit %d, stdout %q, stderr %q; want 5, nothing and one line", r.code, r.stdout, r.stderr)
	}
	srv = fakeprovider.Start(fakeprovider.Reply{Text: "```json\n{\"pop\":1}\n```"})
	defer srv.Close()
	if r := runAsk(t, askEnv{server: srv}, "--schema", schema, "q"); r.code != 0 || r.stdout != `{"pop":1}`+"\n" {
		t.Errorf("valid: exit %d, stdout %q", r.code, r.stdout)
	}
}

// -c carries the last run on, and a yes typed on the terminal reaches the
// run's question whether to go back to the earlier endpoint.
func TestContinueAsksOnTheTerminal(t *testing.T) {
	t.Parallel()
	held := fakeprovider.Start(fakeprovider.Reply{Text: "1"}, fakeprovider.Reply{Text: "2"})
	defer held.Close()
	elsewhere := fakeprovider.Start()
	defer elsewhere.Close()
	e := askEnv{server: elsewhere, wd: t.TempDir(), env: map[string]string{"XDG_STATE_HOME": t.TempDir()}}
	if r := runAsk(t, e, "--base-url", held.URL, "one"); r.code != 0 {
		t.Fatalf("first run: code %d stderr %s", r.code, r.stderr)
	}
	e.tty, e.ttyPath = true, answersOnTerminal(t, "y\n")
	r := runAsk(t, e, "-c", "two")
	if r.code != 0 || r.stdout != "2\n" {
		t.Fatalf("confirmed run: code %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	if got := gjson.GetBytes(held.Requests()[1], "messages.#.content").String(); !strings.Contains(got, `"1"`) || !strings.Contains(got, `"two"`) {
		t.Errorf("the continued request does not carry the conversation: %s", got)
	}
	if n := len(elsewhere.Requests()); n != 0 {
		t.Errorf("%d requests to ASK_BASE_URL after a yes", n)
	}
	if r := runAsk(t, askEnv{wd: e.wd, env: e.env}, "--resume", filepath.Join(e.wd, "nope.jsonl"), "q"); r.code != exitUsage || !strings.Contains(r.stderr, "--resume") {
		t.Errorf("--resume of no file: code %d stderr %q", r.code, r.stderr)
	}
}

// brokenPipe is a stdout whose reader has gone away.
type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// fullDisk is a stdout that cannot take more.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// An answer that cannot be written is a failure, not a success: a script
// reading --json must not be told 0 with nothing to read. A reader that went
// away is the shell's SIGPIPE, 141, quietly (DESIGN §7); any other write
// error is 1, said on stderr.
func TestFailedAnswerWriteExits1(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--json", "x"}, {"x"}} {
		srv := fakeprovider.Start(fakeprovider.Reply{Text: "42"}, fakeprovider.Reply{Text: "42"})
		defer srv.Close()
		r := runAsk(t, askEnv{server: srv, stdout: fullDisk{}}, args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, "write the answer") {
			t.Errorf("ask %v to a full disk: exit %d, stderr %q; want 1 and the write error", args, r.code, r.stderr)
		}
		r = runAsk(t, askEnv{server: srv, stdout: brokenPipe{}}, args...)
		if r.code != fault.ExitPipe || r.stderr != "" {
			t.Errorf("ask %v to a closed pipe: exit %d, stderr %q; want 141 and nothing", args, r.code, r.stderr)
		}
	}
}

// A provider's or a model's text cannot drive the terminal it is shown on:
// an OSC 52 sequence in the answer, or in a provider's error, reaches a
// terminal escaped. A pipe gets the answer's bytes as they are.
func TestProviderTextCannotDriveTheTerminal(t *testing.T) {
	t.Parallel()
	const osc52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
	for _, tt := range []struct {
		env  askEnv
		want string
	}{
		{askEnv{outTTY: true}, `done \u001b]52;c;cm0gLXJmIH4=\u0007` + "\n"},
		{askEnv{}, "done " + osc52 + "\n"},
	} {
		srv := fakeprovider.Start(fakeprovider.Reply{Text: "done " + osc52})
		defer srv.Close()
		tt.env.server = srv
		r := runAsk(t, tt.env, "hi")
		if r.code != 0 || r.stdout != tt.want {
			t.Errorf("stdout a terminal %v: %q, want %q", tt.env.outTTY, r.stdout, tt.want)
		}
	}
	srv := fakeprovider.Start(fakeprovider.Reply{Status: 400, Body: `{"error":{"message":"bad ` + strings.ReplaceAll(osc52, "\x1b", `\u001b`) + `"}}`})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv, tty: true}, "--retries", "0", "hi")
	if strings.Contains(r.stderr, "\x1b]52") || !strings.Contains(r.stderr, `\u001b]52`) {
		t.Errorf("the provider's error reached the terminal raw: %q", r.stderr)
	}
}

// conversationEnv runs ask with its state in a temporary directory.
func conversationEnv(t *testing.T, srv *fakeprovider.Server) (askEnv, string) {
	state := t.TempDir()
	return askEnv{server: srv, wd: t.TempDir(), env: map[string]string{"XDG_STATE_HOME": state}}, filepath.Join(state, "ask", "runs")
}

func TestPlanFileIsTheGoal(t *testing.T) {
	t.Parallel()
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

// runAskTerminal runs the CLI in-process as runAsk does, with stderr a
// terminal or not, approvals read from ttyPath ("" for none), and stdin
// piped unless it is empty.
func runAskTerminal(t *testing.T, srv *fakeprovider.Server, wd, stdin string, errTTY bool, ttyPath string, args ...string) askResult {
	t.Helper()
	var out strings.Builder
	var errb termtest.Buffer // with stderr a terminal, the status line draws from the tools' goroutines
	env := map[string]string{"ASK_PROVIDER": "openai", "ASK_BASE_URL": srv.URL, "OPENAI_API_KEY": "fake-test-not-a-real-key-0000"}
	stdio := &IO{
		In: strings.NewReader(stdin), Out: &out, Err: &errb,
		InTTY: stdin == "", ErrTTY: errTTY, TTYPath: ttyPath,
		Getenv:  func(k string) string { return env[k] },
		Environ: func() []string { return nil },
		HTTP:    &http.Client{Timeout: 30 * time.Second},
		Now:     time.Now,
		Wd:      wd,

		sandboxCheck: noSandbox, // --safe refuses commands on any machine
	}
	code := runCLI(context.Background(), append([]string{"ask"}, args...), stdio)
	return askResult{stdout: out.String(), stderr: errb.String(), code: code}
}

// answersOnTerminal makes a FIFO holding the person's answers, to stand in
// for /dev/tty. The answers precede anything the prompter writes to it, so
// they are read first. The FIFO is held open until the test ends: its data
// lives only while some end is open.
func answersOnTerminal(t *testing.T, answers string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tty")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0) // O_RDWR: does not wait for a reader
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.WriteString(answers); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestApprovalsAreAskedOnTheTerminal: approvals are asked on the
// controlling terminal whenever it can be opened, with stderr redirected
// too, and never read from stdin. (The policy table itself is
// internal/run's TestPolicyExitCodes.)
func TestApprovalsAreAskedOnTheTerminal(t *testing.T) {
	t.Parallel()
	const noTTY = "-"
	tests := []struct {
		name   string
		errTTY bool   // a person watches stderr
		tty    string // answers typed on the terminal, or noTTY
		stdin  string // piped stdin, never read for answers
		ran    bool   // whether the write ran
		reason string
	}{
		{name: "agent, stderr redirected, the terminal still there", tty: "y\n", ran: true},
		{name: "answers come from the terminal, never from stdin", errTTY: true, tty: "n\n", stdin: "y\ny\na\n", reason: "declined"},
		{name: "no terminal: stdin is not asked", errTTY: true, tty: noTTY, stdin: "y\ny\na\n", reason: "no terminal to ask"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ttyPath := ""
			if tt.tty != noTTY {
				ttyPath = answersOnTerminal(t, tt.tty)
			}
			srv := fakeprovider.Start(fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("w", "write_file", `{"path":"out.txt","content":"x"}`)}},
				fakeprovider.Reply{Text: "done"})
			defer srv.Close()
			r := runAskTerminal(t, srv, dir, tt.stdin, tt.errTTY, ttyPath, "--json", "go")
			if r.code != exitOK {
				t.Errorf("exit %d, want 0; stderr %s", r.code, r.stderr)
			}
			var got run.Summary
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("stdout is not the final JSON (%v): %q; stderr %s", err, r.stdout, r.stderr)
			}
			_, err := os.Stat(filepath.Join(dir, "out.txt"))
			if ran := err == nil; ran != tt.ran || got.Answer != "done" {
				t.Errorf("write ran %v, want %v; answer %q", ran, tt.ran, got.Answer)
			}
			if !tt.ran && (len(got.Denials) != 1 || !strings.Contains(got.Denials[0].Reason, tt.reason)) {
				t.Errorf("denials %+v, want one with %q", got.Denials, tt.reason)
			}
		})
	}
}

// TestQuietKeepsTheFallbackNote: under -q the switch to the text tool
// protocol is not said, and a second refusal is still an error. (The
// fallback itself is internal/run's TestToolProtocolAutoFallback.)
func TestQuietKeepsTheFallbackNote(t *testing.T) {
	t.Parallel()
	refusal := fakeprovider.Reply{Status: 400, Body: `{"error":{"message":"stablelm2:latest does not support tools","type":"api_error","param":null,"code":null}}`}
	srv := fakeprovider.Start(refusal, refusal)
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv}, "-q", "x")
	if r.code != 3 || strings.Contains(r.stderr, "switching") || len(srv.Requests()) != 2 {
		t.Errorf("code %d, stderr %q, %d requests", r.code, r.stderr, len(srv.Requests()))
	}
}

// TestTimeoutBoundsTheInvocation: --timeout counts from the start, so a
// pipe that stays open does not hold the run past it (it is read as
// context), and 0 means no limit.
func TestTimeoutBoundsTheInvocation(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "42"})
	defer srv.Close()
	open, w := io.Pipe() // never written, never closed
	defer w.Close()
	r := runAsk(t, askEnv{server: srv, in: open}, "--timeout", "200ms", "hi")
	if r.code != exitTimeout || !strings.Contains(r.stderr, "--timeout 200ms reached while reading stdin") {
		t.Errorf("open stdin: exit %d, stderr %q; want %d and the line that says why", r.code, r.stderr, exitTimeout)
	}
	if got := len(srv.Requests()); got != 0 {
		t.Errorf("%d requests were sent after the timeout", got)
	}
	if r := runAsk(t, askEnv{server: srv}, "--timeout", "0", "--no-stream", "hi"); r.code != 0 || r.stdout != "42\n" {
		t.Errorf("--timeout 0: exit %d, stdout %q, stderr %q; want the answer", r.code, r.stdout, r.stderr)
	}
}

// TestRunSummaryOnlyOnATerminal: the line ends a run whose stderr is a
// terminal, not one whose stderr is a file or a pipe, nor a quiet one;
// -v shows each step's usage wherever stderr goes.
func TestRunSummaryOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	replies := func() []fakeprovider.Reply {
		return []fakeprovider.Reply{
			{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}},
			{Text: "done"},
		}
	}
	// The end-of-run line names the provider and the model, then what the run took.
	const summary = "ask: openai gpt-4o-mini · 2 steps · 200 tokens in, 40 out"
	tests := []struct {
		name      string
		tty       bool
		args      []string
		want      bool
		stepLines bool
	}{
		{"terminal", true, nil, true, false},
		{"not a terminal", false, nil, false, false},
		{"quiet terminal", true, []string{"-q"}, false, false},
		{"--json on a terminal", true, []string{"--json"}, true, false},
		{"verbose, not a terminal", false, []string{"-v"}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(replies()...)
			defer srv.Close()
			r := runAsk(t, askEnv{server: srv, tty: tt.tty, env: map[string]string{"NO_COLOR": "1"}}, append(tt.args, "list it")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := strings.Contains(r.stderr, summary); got != tt.want {
				t.Errorf("summary shown %v, want %v; stderr:\n%s", got, tt.want, r.stderr)
			}
			// On a terminal each finished call leaves its line; -q hides it.
			if got, want := strings.Contains(r.stderr, "· list_directory . ("), tt.want; got != want {
				t.Errorf("the call's line shown %v, want %v; stderr:\n%s", got, want, r.stderr)
			}
			if strings.Contains(r.stdout, "tokens in") {
				t.Errorf("the summary reached stdout: %q", r.stdout)
			}
			if got := strings.Count(r.stderr, "tokens in, 20 out"); tt.stepLines && got != 2 {
				t.Errorf("-v: %d step usage lines, want 2; stderr:\n%s", got, r.stderr)
			}
		})
	}
}

// TestNarrationIsSeparatedFromTheAnswer: on a terminal stdout every step's
// text streams as it comes, so narration before tool calls must not run
// into the answer, whether stderr is a terminal or not.
func TestNarrationIsSeparatedFromTheAnswer(t *testing.T) {
	t.Parallel()
	call := func(id string) []providers.ToolCall {
		return []providers.ToolCall{{ID: id, Name: "list_directory", Arguments: `{"path":"."}`}}
	}
	tests := []struct {
		name    string
		env     askEnv
		replies []fakeprovider.Reply
		want    string
	}{
		{name: "stdout a terminal, stderr not", env: askEnv{outTTY: true},
			replies: []fakeprovider.Reply{{Text: "Let me look.", Calls: call("c1")}, {Text: "It is empty."}},
			want:    "Let me look.\n\nIt is empty.\n"},
		// On one terminal the status line ends the narration's line on its
		// way below it (stderr), so the answer adds one newline: one blank
		// line on the screen, the call's line in it.
		{name: "both terminals", env: askEnv{tty: true},
			replies: []fakeprovider.Reply{{Text: "Let me look.", Calls: call("c1")}, {Text: "It is empty."}},
			want:    "Let me look.\nIt is empty.\n"},
		{name: "narration ending in a newline", env: askEnv{outTTY: true},
			replies: []fakeprovider.Reply{{Text: "Looking.\n", Calls: call("c1")}, {Text: "Still looking.", Calls: call("c2")}, {Text: "Empty."}},
			want:    "Looking.\n\nStill looking.\n\nEmpty.\n"},
		{name: "silent tool steps add nothing", env: askEnv{outTTY: true},
			replies: []fakeprovider.Reply{{Calls: call("c1")}, {Text: "It is empty."}},
			want:    "It is empty.\n"},
		{name: "a pipe gets the answer alone",
			replies: []fakeprovider.Reply{{Text: "Let me look.", Calls: call("c1")}, {Text: "It is empty."}},
			want:    "It is empty.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(tt.replies...)
			defer srv.Close()
			tt.env.server = srv
			r := runAsk(t, tt.env, "what is here?")
			if r.code != 0 || r.stdout != tt.want {
				t.Errorf("exit %d, stdout %q, want %q (stderr %q)", r.code, r.stdout, tt.want, r.stderr)
			}
		})
	}
}

// writes counts the writes stdout is given.
type writes struct {
	n   int
	all strings.Builder
}

func (w *writes) Write(p []byte) (int, error) { w.n++; return w.all.Write(p) }

// Into a pipe the answer streams as it comes where no step can turn out to
// be narration before tool calls: a run that offers no tools. With tools,
// a pipe gets the answer alone, at the end.
func TestAnswerStreamsIntoAPipeWithoutTools(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args      []string
		streamed  bool
		wantWrite string
	}{
		{[]string{"--no-tools", "hi"}, true, "It is a long answer, streamed.\n"},
		{[]string{"hi"}, false, "It is a long answer, streamed.\n"},
	} {
		srv := fakeprovider.Start(fakeprovider.Reply{Text: "It is a long answer, streamed."})
		defer srv.Close()
		out := &writes{}
		r := runAsk(t, askEnv{server: srv, stdout: out}, tt.args...)
		if r.code != 0 || out.all.String() != tt.wantWrite {
			t.Fatalf("ask %v: exit %d, stdout %q", tt.args, r.code, out.all.String())
		}
		if got := out.n > 2; got != tt.streamed {
			t.Errorf("ask %v into a pipe: %d writes; streamed %v, want %v", tt.args, out.n, got, tt.streamed)
		}
	}
}

// M7 and L3: --transcript run.jsonl followed a symlink the checkout
// planted and overwrote a file outside; transcripts were 0644. A link is
// refused and its target left as it was; a transcript is 0600, even over
// an existing file of wider mode.
func TestTranscriptFileIsPrivateAndNeverThroughALink(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, path, target string)
		ok    bool
	}{
		{"new file", func(*testing.T, string, string) {}, true},
		{"existing 0644 file", func(t *testing.T, path, _ string) {
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"symlink", func(t *testing.T, path, target string) {
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"hard link", func(t *testing.T, path, target string) {
			if err := os.Link(target, path); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "hi"})
			defer srv.Close()
			wd, outside := t.TempDir(), t.TempDir()
			target := filepath.Join(outside, "bashrc")
			if err := os.WriteFile(target, []byte("KEEP ME\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(wd, "run.jsonl")
			c.plant(t, path, target)
			r := runAsk(t, askEnv{server: srv, wd: wd}, "--no-tools", "--transcript", path, "q")
			if got, _ := os.ReadFile(target); string(got) != "KEEP ME\n" {
				t.Errorf("the file outside was written through the transcript path: %.60q", got)
			}
			if !c.ok {
				if r.code != exitUsage || !strings.Contains(r.stderr, "--transcript") {
					t.Errorf("exit %d, stderr %q; want a usage error naming --transcript", r.code, r.stderr)
				}
				return
			}
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			info, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != 0o600 {
				t.Errorf("transcript mode %v, want 0600", info.Mode().Perm())
			}
			if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), `{"type":"run.started"`) {
				t.Errorf("transcript starts %q", b[:min(len(b), 40)])
			}
		})
	}
}

// At a terminal, the status line names the MCP servers a run is waiting
// for while they start, and goes once they are up.
func TestStatusLineNamesStartingMCPServers(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "hello"})
	defer srv.Close()
	wd := t.TempDir()
	gate, started := filepath.Join(t.TempDir(), "gate"), filepath.Join(t.TempDir(), "started")
	done := make(chan askResult, 1)
	go func() {
		// fakemcp is on PATH: testscript.Main puts its commands there.
		done <- runAskTerminal(t, srv, wd, "", true, "", "--mcp", "FAKEMCP_LOG="+started+" FAKEMCP_GATE="+gate+" fakemcp", "hi")
	}()
	// The server answers nothing until the gate exists: once it has
	// started, the line has had time to show.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
	}
	time.Sleep(100 * time.Millisecond)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var r askResult
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end")
	}
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "· starting MCP server fakemcp · ") {
		t.Errorf("the status line never named the starting server:\n%q", r.stderr)
	}
	// Cleared before the first step's line.
	if i, j := strings.LastIndex(r.stderr, "starting MCP server"), strings.Index(r.stderr, "step 1/"); j < i {
		t.Errorf("the starting line outlived the start:\n%q", r.stderr)
	}
}

const redPrefix = "\033[1;31mask:\033[0m "

// Colour decorates stderr only: on a terminal by default, never in a
// pipe, never with NO_COLOR or --color never, always with --color always.
func TestErrorPrefixColour(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		tty      bool
		env      map[string]string
		config   string
		args     []string
		coloured bool
	}{
		{name: "terminal", tty: true, coloured: true},
		{name: "pipe", tty: false, coloured: false},
		{name: "NO_COLOR", tty: true, env: map[string]string{"NO_COLOR": "1"}, coloured: false},
		{name: "empty NO_COLOR is unset", tty: true, env: map[string]string{"NO_COLOR": ""}, coloured: true},
		{name: "dumb terminal", tty: true, env: map[string]string{"TERM": "dumb"}, coloured: false},
		{name: "--color never", tty: true, args: []string{"--color", "never"}, coloured: false},
		{name: "--color=never after the prompt", tty: true, args: []string{"--color=never"}, coloured: false},
		{name: "--color always in a pipe", tty: false, args: []string{"--color", "always"}, coloured: true},
		{name: "--color always over NO_COLOR", tty: true, env: map[string]string{"NO_COLOR": "1"}, args: []string{"--color", "always"}, coloured: true},
		{name: "--color auto keeps NO_COLOR", tty: true, env: map[string]string{"NO_COLOR": "1"}, args: []string{"--color", "auto"}, coloured: false},
		{name: "config never", tty: true, config: `{"color": "never"}`, coloured: false},
		{name: "config always in a pipe", tty: false, config: `{"color": "always"}`, coloured: true},
		{name: "NO_COLOR over config always", tty: true, env: map[string]string{"NO_COLOR": "1"}, config: `{"color": "always"}`, coloured: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.config != "" {
				runtest.WriteConfig(t, home, tt.config)
			}
			env := map[string]string{"HOME": home}
			for k, v := range tt.env {
				env[k] = v
			}
			// An unknown provider is a usage error, reported by run.
			args := append([]string{"-p", "nope", "why?"}, tt.args...)
			r := runAsk(t, askEnv{env: env, tty: tt.tty}, args...)
			if r.code != exitUsage {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := strings.HasPrefix(r.stderr, redPrefix); got != tt.coloured {
				t.Errorf("coloured = %v, want %v: %q", got, tt.coloured, r.stderr)
			}
			if !tt.coloured && strings.Contains(r.stderr, "\033[") {
				t.Errorf("escape codes without colour: %q", r.stderr)
			}
		})
	}
}

// On a terminal the live status goes to stderr, dimmed, and the answer to
// stdout without escapes; in a pipe stderr stays empty; --quiet keeps
// stderr for errors only.
func TestTerminalVersusPipe(t *testing.T) {
	t.Parallel()
	replies := func() *fakeprovider.Server {
		return fakeprovider.Start(
			fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}},
			fakeprovider.Reply{Text: "done"})
	}
	tests := []struct {
		name       string
		tty        bool
		env        map[string]string
		args       []string
		wantStatus bool
		wantColour bool
	}{
		{name: "terminal", tty: true, wantStatus: true, wantColour: true},
		{name: "terminal with NO_COLOR", tty: true, env: map[string]string{"NO_COLOR": "1"}, wantStatus: true},
		{name: "terminal with --color never", tty: true, args: []string{"--color", "never"}, wantStatus: true},
		{name: "terminal with --quiet", tty: true, args: []string{"--quiet"}},
		{name: "pipe", tty: false},
		{name: "pipe with --color always", tty: false, args: []string{"--color", "always"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := replies()
			defer srv.Close()
			r := runAsk(t, askEnv{server: srv, tty: tt.tty, env: tt.env}, append([]string{"what is here?"}, tt.args...)...)
			if r.code != 0 || r.stdout != "done\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			hasStatus := strings.Contains(r.stderr, "step 1/100 · thinking") && strings.Contains(r.stderr, "step 1/100 · list_directory . ·")
			if hasStatus != tt.wantStatus {
				t.Errorf("status shown = %v, want %v: %q", hasStatus, tt.wantStatus, r.stderr)
			}
			if !tt.wantStatus && r.stderr != "" {
				t.Errorf("stderr %q, want nothing", r.stderr)
			}
			if got := strings.Contains(r.stderr, "\033[2m· step"); got != tt.wantColour {
				t.Errorf("dimmed status = %v, want %v: %q", got, tt.wantColour, r.stderr)
			}
			// The status is cleared at the end, and the run's summary
			// (usage_test.go) stands on its own line after it.
			status, summary, _ := strings.Cut(r.stderr, "ask: ")
			if tt.wantStatus && (!strings.HasSuffix(status, "\r\033[K") || !strings.Contains(summary, "2 steps")) {
				t.Errorf("the status line was not cleared before the summary: %q", r.stderr)
			}
		})
	}
}
