package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
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
