package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
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

// newestRun is the newest run kept in the history directory dir, or a
// path that does not exist when none is.
func newestRun(t *testing.T, dir string) string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(names) == 0 {
		return filepath.Join(dir, "no run is kept")
	}
	slices.Sort(names)
	return names[len(names)-1]
}

// toolsFile writes a tools file declaring one read-only command tool.
func toolsFile(t *testing.T, path, tool string) {
	t.Helper()
	spec := fmt.Sprintf(`{"tools":[{"name":%q,"description":"test tool","command":"echo hi","risk":"read"}]}`, tool)
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
}

func declaredNames(body []byte) string {
	var names []string
	for _, n := range gjson.GetBytes(body, "tools.#.function.name").Array() {
		names = append(names, n.String())
	}
	return strings.Join(names, ",")
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
