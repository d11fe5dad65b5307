package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/term/termtest"
)

func declaredNames(body []byte) string {
	var names []string
	for _, n := range gjson.GetBytes(body, "tools.#.function.name").Array() {
		names = append(names, n.String())
	}
	return strings.Join(names, ",")
}

func TestSafeRefusesWritesAndExits6(t *testing.T) {
	t.Parallel()
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
	var got run.Summary
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
	t.Parallel()
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

func TestDenyToolIsNotDeclared(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("r", "read_file", `{"path":"x"}`)}},
		fakeprovider.Reply{Text: "ok"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv}, "--deny-tool", "read_file", "--deny-tool", "shell:rm *", "--json", "q")
	if d := declaredNames(srv.Requests()[0]); strings.Contains(d, "read_file") || !strings.Contains(d, "shell") {
		t.Errorf("declared %s: read_file denied outright is hidden, shell with an argument pattern stays", d)
	}
	var got run.Summary
	json.Unmarshal([]byte(r.stdout), &got)
	if r.code != 0 || len(got.Denials) != 1 || !strings.Contains(got.Denials[0].Reason, "--deny-tool read_file") {
		t.Errorf("exit %d denials %+v: a denied call is answered and listed, and is not a --safe refusal", r.code, got.Denials)
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

// policyTools adds a user tool that writes and requires approval to the
// built-in read_file, write_file (writes, requires approval) and shell
// (runs commands, requires approval).
const policyTools = `{"tools":[{"name":"stamp","description":"Stamp the work directory","command":"echo stamped > stamped.txt",
  "risk":"write","requires_approval":true}]}`

// TestPolicyExitCodes is the policy table through the real CLI: mode ×
// tool risk × flags × terminal (and the answers typed there) → what is
// declared, which calls run, why the others were denied, and the exit code.
// A --safe refusal exits 6; any other denial leaves the exit code alone.
func TestPolicyExitCodes(t *testing.T) {
	t.Parallel()
	const (
		every    = "read_file,list_directory,search,edit_file,write_file,shell,stamp"
		readOnly = "read_file,list_directory,search"
		noTTY    = "-" // no terminal path at all
	)
	// One step calls each kind of tool; what each leaves behind shows it ran.
	calls := []providers.ToolCall{
		fakeprovider.Call("read_file", "read_file", `{"path":"in.txt"}`),
		fakeprovider.Call("write_file", "write_file", `{"path":"out.txt","content":"x"}`),
		fakeprovider.Call("stamp", "stamp", `{}`),
		fakeprovider.Call("shell", "shell", `{"command":"echo ran > shell.txt"}`),
	}
	leaves := map[string]string{"write_file": "out.txt", "stamp": "stamped.txt", "shell": "shell.txt"}

	tests := []struct {
		name     string
		args     []string
		errTTY   bool   // a person watches stderr
		tty      string // answers typed on the terminal, or noTTY
		stdin    string // piped stdin, never read for answers
		declared string
		want     string // per call of read_file, write_file, stamp, shell: run, deny or refuse
		reason   string // in every denial's reason
		exit     int
	}{
		{name: "agent, no terminal", tty: noTTY, declared: every,
			want: "run,deny,deny,deny", reason: "no terminal to ask", exit: exitOK},
		{name: "agent --accept-edits, no terminal: commands still ask", args: []string{"--accept-edits"}, tty: noTTY, declared: every,
			want: "run,run,deny,deny", reason: "no terminal to ask", exit: exitOK},
		// A terminal is /dev/tty: with stderr redirected (2>err.log) the
		// person is still asked there.
		{name: "agent, stderr redirected, the terminal still there", tty: "y\n", declared: every,
			want: "run,run,run,run", exit: exitOK},
		{name: "agent, yes on the terminal", errTTY: true, tty: "y\n", declared: every,
			want: "run,run,run,run", exit: exitOK},
		{name: "agent, always on the terminal", errTTY: true, tty: "a\n", declared: every,
			want: "run,run,run,run", exit: exitOK},
		{name: "agent, no on the terminal", errTTY: true, tty: "n\n", declared: every,
			want: "run,deny,deny,deny", reason: "declined", exit: exitOK},
		{name: "agent, one by one", errTTY: true, tty: "o\ny\ny\nn\n", declared: every,
			want: "run,run,run,deny", reason: "declined", exit: exitOK},
		{name: "agent, o where it is not offered is asked again", errTTY: true, tty: "o\no\ny\no\nn\no\ny\n", declared: every,
			want: "run,run,deny,run", reason: "declined", exit: exitOK},
		{name: "answers come from the terminal, never from stdin", errTTY: true, tty: "n\n", stdin: "y\ny\na\n", declared: every,
			want: "run,deny,deny,deny", reason: "declined", exit: exitOK},
		{name: "no terminal: stdin is not asked", errTTY: true, tty: noTTY, stdin: "y\ny\na\n", declared: every,
			want: "run,deny,deny,deny", reason: "no terminal to ask", exit: exitOK},
		{name: "agent --yes", args: []string{"--yes"}, tty: noTTY, declared: every,
			want: "run,run,run,run", exit: exitOK},
		{name: "agent --allow-tool with an argument pattern", args: []string{"--allow-tool", "shell:echo ran*"}, tty: noTTY, declared: every,
			want: "run,deny,deny,run", reason: "no terminal to ask", exit: exitOK},
		{name: "agent --allow-tool that does not match", args: []string{"--allow-tool", "shell:git *"}, errTTY: true, tty: "n\n", declared: every,
			want: "run,deny,deny,deny", reason: "declined", exit: exitOK},
		{name: "agent --deny-tool wins over --yes and --allow-tool", args: []string{"--yes", "--allow-tool", "shell", "--deny-tool", "shell", "--deny-tool", "write_*"}, tty: noTTY,
			declared: "read_file,list_directory,search,edit_file,stamp",
			want:     "run,deny,run,deny", reason: "--deny-tool", exit: exitOK},
		{name: "ask mode", args: []string{"--mode", "ask", "--yes"}, errTTY: true, tty: "y\n", declared: readOnly,
			want: "run,deny,deny,deny", reason: "ask mode does not allow", exit: exitOK},
		{name: "plan mode", args: []string{"--mode", "plan", "--allow-tool", "*"}, tty: noTTY, declared: readOnly,
			want: "run,deny,deny,deny", reason: "plan mode does not allow", exit: exitOK},
		{name: "--safe", args: []string{"--safe"}, tty: noTTY, declared: readOnly,
			want: "run,refuse,refuse,refuse", reason: "refused by --safe", exit: exitRefused},
		{name: "--safe over --yes, --allow-tool and a yes on the terminal", args: []string{"--safe", "--yes", "--allow-tool", "*"}, errTTY: true, tty: "y\n", declared: readOnly,
			want: "run,refuse,refuse,refuse", reason: "refused by --safe", exit: exitRefused},
		{name: "--safe over --deny-tool", args: []string{"--safe", "--deny-tool", "shell"}, tty: noTTY, declared: readOnly,
			want: "run,refuse,refuse,refuse", reason: "refused by --safe", exit: exitRefused},
		{name: "--safe in ask mode", args: []string{"--safe", "--mode", "ask"}, tty: noTTY, declared: readOnly,
			want: "run,refuse,refuse,refuse", reason: "refused by --safe", exit: exitRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range map[string]string{"in.txt": "input\n", "tools.json": policyTools} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ttyPath := ""
			if tt.tty != noTTY {
				ttyPath = answersOnTerminal(t, tt.tty)
			}
			srv := fakeprovider.Start(fakeprovider.Reply{Calls: calls}, fakeprovider.Reply{Text: "done"})
			defer srv.Close()
			args := append([]string{"--json", "--tools-file", "tools.json"}, tt.args...)
			r := runAskTerminal(t, srv, dir, tt.stdin, tt.errTTY, ttyPath, append(args, "go")...)

			if r.code != tt.exit {
				t.Errorf("exit %d, want %d; stderr %s", r.code, tt.exit, r.stderr)
			}
			var got run.Summary
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("stdout is not the final JSON (%v): %q; stderr %s", err, r.stdout, r.stderr)
			}
			if got.ExitCode != tt.exit || got.Answer != "done" {
				t.Errorf("final JSON: exit_code %d answer %q, want %d and the run going on after denials", got.ExitCode, got.Answer, tt.exit)
			}
			if d := declaredNames(srv.Requests()[0]); d != tt.declared {
				t.Errorf("declared %s, want %s", d, tt.declared)
			}
			reasons := map[string]string{}
			for _, d := range got.Denials {
				reasons[d.ID] = d.Reason
			}
			var outcomes []string
			for _, c := range calls {
				reason, denied := reasons[c.ID]
				switch {
				case strings.Contains(reason, "refused by --safe"):
					outcomes = append(outcomes, "refuse")
				case denied:
					outcomes = append(outcomes, "deny")
				default:
					outcomes = append(outcomes, "run")
				}
				if denied && !strings.Contains(reason, tt.reason) {
					t.Errorf("%s denied for %q, want a reason with %q", c.Name, reason, tt.reason)
				}
				if file, ok := leaves[c.Name]; ok {
					_, err := os.Stat(filepath.Join(dir, file))
					if ran := err == nil; ran == denied {
						t.Errorf("%s: denied %v, but %s exists %v", c.Name, denied, file, ran)
					}
				}
			}
			if o := strings.Join(outcomes, ","); o != tt.want {
				t.Errorf("calls %s, want %s; denials %+v", o, tt.want, got.Denials)
			}
			wantStatus := "completed"
			if tt.exit == exitRefused {
				wantStatus = "denied"
			}
			if got.Status != wantStatus {
				t.Errorf("status %q, want %q", got.Status, wantStatus)
			}
		})
	}
}

// An open approval question does not hold the run past --timeout: the
// question gives up, the calls are denied, and the run stops with exit 124.
// The test takes as long as the timeout; it asserts no duration.
func TestApprovalQuestionEndsAtTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it waits for --timeout")
	}
	t.Parallel()
	dir := t.TempDir()
	ttyPath := answersOnTerminal(t, "") // a terminal nobody answers
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("s", "shell", `{"command":"echo ran > shell.txt"}`)}},
		fakeprovider.Reply{Text: "not reached"})
	defer srv.Close()
	r := runAskTerminal(t, srv, dir, "", true, ttyPath, "--json", "--timeout", "2s", "go")
	if r.code != exitTimeout {
		t.Fatalf("exit %d, want %d; stderr %s", r.code, exitTimeout, r.stderr)
	}
	var got run.Summary
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not the final JSON (%v): %q", err, r.stdout)
	}
	// The denial proves the timeout came while the question was open, not
	// during the request.
	if got.Status != "timeout" || len(got.Denials) != 1 || !strings.Contains(got.Denials[0].Reason, "timeout reached") {
		t.Errorf("status %q denials %+v: want the open question ended by the timeout", got.Status, got.Denials)
	}
	if _, err := os.Stat(filepath.Join(dir, "shell.txt")); err == nil {
		t.Error("the unanswered call ran")
	}
}
