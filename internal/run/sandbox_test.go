package run

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/sandbox/sandboxtest"
)

// A CI job: `ask --safe` lets the model run the module's tests without
// asking, inside the read-only sandbox. They pass, the build cache lands in
// the run's scratch directory, nothing is written in the working
// directory, and a planted SSH key stays unreadable.
func TestSafeRunsTheTestsInTheSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it runs go test inside the sandbox")
	}
	t.Parallel()
	sandboxtest.Require(t, sandbox.Policy{Level: sandbox.ReadOnly})
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run tests with")
	}
	wd := t.TempDir()
	for name, body := range map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"m.go":   "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"m_test.go": `package m

import (
	"os"
	"testing"
)

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("2+3")
	}
	// Nothing may be written in the working directory.
	if err := os.WriteFile("written.txt", []byte("x"), 0o644); err == nil {
		t.Fatal("wrote in the working directory")
	}
	println("GOCACHE=" + os.Getenv("GOCACHE"))
}
`,
	} {
		if err := os.WriteFile(filepath.Join(wd, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	key := filepath.Join(home, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := listDir(t, wd)

	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("test", "shell", fmt.Sprintf(`{"command":"%s test -count=1 -v . 2>&1","timeout_seconds":600}`, goBin)),
			fakeprovider.Call("key", "shell", fmt.Sprintf(`{"command":"cat %s"}`, key)),
			fakeprovider.Call("write", "write_file", `{"path":"x.txt","content":"x"}`),
		}},
		fakeprovider.Reply{Text: "the tests pass"})
	defer srv.Close()
	w := newWorld(t, srv).with("HOME", home)
	w.wd, w.sandbox = wd, sandbox.Check
	r := w.ask("run the tests", "safe", true)
	// The write is refused, and so the exit status is 6; the commands ran.
	if r.code != fault.ExitRefused {
		t.Fatalf("exit %d, want %d (the write refused); stderr %s", r.code, fault.ExitRefused, r.stderr)
	}
	got := r.summary()
	results := map[string]string{}
	for _, c := range got.ToolCalls {
		results[c.ID] = c.Content
		if c.ID != "write" && c.Denied {
			t.Errorf("%s was denied under --safe with a working sandbox: %s", c.ID, c.Content)
		}
	}
	test := results["test"]
	if !strings.Contains(test, "exit code: 0") || !strings.Contains(test, "--- PASS: TestAdd") {
		t.Errorf("go test in the sandbox did not pass:\n%s", test)
	}
	scratch := filepath.Join(realTemp(t), "ask-sandbox-")
	if !strings.Contains(test, "GOCACHE="+scratch) {
		t.Errorf("GOCACHE is not in the run's scratch directory %s*:\n%s", scratch, test)
	}
	if c := results["key"]; strings.Contains(c, "PRIVATE KEY") || !strings.Contains(c, "Permission denied") {
		t.Errorf("the planted key was readable, or failed otherwise:\n%s", c)
	}
	if len(got.Denials) != 1 || got.Denials[0].Name != "write_file" {
		t.Errorf("denials %+v, want only write_file's", got.Denials)
	}
	if after := listDir(t, wd); !slices.Equal(before, after) {
		t.Errorf("the working directory changed:\nbefore %v\nafter  %v", before, after)
	}
	// The scratch directory is gone with the run.
	for _, line := range strings.Split(test, "\n") {
		if cache, ok := strings.CutPrefix(strings.TrimSpace(line), "GOCACHE="); ok {
			if _, err := os.Stat(filepath.Dir(filepath.Dir(cache))); err == nil {
				t.Errorf("the scratch directory of %s outlived the run", cache)
			}
		}
	}
}

// TestSandboxHidesPastRuns: the kept runs under $XDG_STATE_HOME/ask hold
// past prompts and answers from every project; a confined command cannot
// read them, whichever way it names them.
func TestSandboxHidesPastRuns(t *testing.T) {
	t.Parallel()
	sandboxtest.Require(t, sandbox.Policy{Level: sandbox.Workdir})
	home := t.TempDir()
	past := filepath.Join(home, ".local", "state", "ask", "runs", "20261101-101010.000000-abcd.jsonl")
	if err := os.MkdirAll(filepath.Dir(past), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(past, []byte(`{"type":"run.started","prompt":"PAST-RUN-SECRET"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("cat", "shell", fmt.Sprintf(`{"command":"cat %s"}`, past)),
			fakeprovider.Call("grep", "shell", `{"command":"grep -r PAST-RUN-SECRET ~/.local/state"}`),
		}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	w := newWorld(t, srv).with("HOME", home)
	delete(w.vars, "XDG_STATE_HOME") // the state is under HOME
	w.sandbox = sandbox.Check
	r := w.ask("read the past runs", "sandbox", "workdir", "yes", true)
	if r.code != 0 {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	got := r.summary()
	if len(got.ToolCalls) != 2 {
		t.Fatalf("tool calls %+v", got.ToolCalls)
	}
	for _, c := range got.ToolCalls {
		if c.Denied || !strings.Contains(c.Content, "exit code:") || strings.Contains(c.Content, "PAST-RUN-SECRET") {
			t.Errorf("%s: a past run was readable in the sandbox, or the command did not run:\n%s", c.ID, c.Content)
		}
		if c.ID == "cat" && !strings.Contains(c.Content, "Permission denied") {
			t.Errorf("cat of a past run failed otherwise than refused:\n%s", c.Content)
		}
	}
}

// Without a kernel that confines, --safe offers no commands and refuses
// one asked for anyway, saying why.
func TestSafeWithoutASandboxRefusesCommands(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("s", "shell", `{"command":"touch ran"}`)}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	w := newWorld(t, srv)
	w.wd = wd
	r := w.ask("go", "safe", true)
	if r.code != fault.ExitRefused {
		t.Fatalf("exit %d, want %d; stderr %s", r.code, fault.ExitRefused, r.stderr)
	}
	got := r.summary()
	const want = "refused by --safe: shell runs commands and the sandbox cannot confine the file system here: the tests say so (world.sandbox)"
	if len(got.Denials) != 1 || !strings.Contains(got.Denials[0].Reason, want) {
		t.Errorf("denials %+v, want one saying %q", got.Denials, want)
	}
	if _, err := os.Stat(filepath.Join(wd, "ran")); err == nil {
		t.Error("the refused command ran")
	}
	if strings.Contains(strings.Join(srvToolNames(t, srv), ","), "shell") {
		t.Error("shell was offered under --safe without a sandbox")
	}
}

// --sandbox workdir: the command writes in the working directory but not
// outside it; --sandbox with a kernel that cannot confine refuses the
// command with one line, and it does not run.
func TestSandboxFlag(t *testing.T) {
	t.Parallel()
	sandboxtest.Require(t, sandbox.Policy{Level: sandbox.Workdir})
	wd, outside := t.TempDir(), t.TempDir()
	call := func(id, command string) providers.ToolCall {
		return fakeprovider.Call(id, "shell", fmt.Sprintf(`{"command":%q}`, command))
	}
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			call("in", "echo x > in.txt"), call("out", "echo x > "+filepath.Join(outside, "out.txt")),
		}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	w := newWorld(t, srv)
	w.wd, w.sandbox = wd, sandbox.Check
	r := w.ask("write", "sandbox", "workdir", "yes", true)
	if r.code != 0 {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "in.txt")); err != nil {
		t.Errorf("no file written in the working directory: %v\n%+v", err, r.Calls)
	}
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); err == nil {
		t.Errorf("a file was written outside the working directory")
	}

	srv2 := fakeprovider.Start(fakeprovider.Reply{Calls: []providers.ToolCall{call("s", "touch ran")}}, fakeprovider.Reply{Text: "done"})
	defer srv2.Close()
	w2 := newWorld(t, srv2)
	w2.wd = wd
	r = w2.ask("go", "sandbox", "read-only", "yes", true)
	if r.Result == nil {
		t.Fatalf("the run was not built: %s", r.stderr)
	}
	got := r.summary()
	const want = "shell: refused by the sandbox: cannot confine the file system here: the tests say so (world.sandbox); commands never run unconfined"
	if len(got.ToolCalls) != 1 || got.ToolCalls[0].Content != want {
		t.Errorf("tool calls %+v, want the one-line refusal %q", got.ToolCalls, want)
	}
	if _, err := os.Stat(filepath.Join(wd, "ran")); err == nil {
		t.Error("the refused command ran")
	}
	if !strings.Contains(r.stderr, "ask: warning: --sandbox read-only: the sandbox cannot confine the file system here") {
		t.Errorf("no warning on stderr: %s", r.stderr)
	}
	if r := w2.ask("go", "sandbox", "readonly"); r.code != fault.ExitUsage || !strings.Contains(r.stderr, "choose off, workdir or read-only") {
		t.Errorf("--sandbox readonly: exit %d stderr %s", r.code, r.stderr)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error {
		names = append(names, p)
		return nil
	})
	return names
}

func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// srvToolNames are the tools the first request offered.
func srvToolNames(t *testing.T, srv *fakeprovider.Server) []string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	var body struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(reqs[0], &body); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range body.Tools {
		names = append(names, tl.Function.Name)
	}
	return names
}
