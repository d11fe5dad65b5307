package run

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/term"
)

// The tools a run declares and the policy over them (build.go).

func TestSafeRefusesWritesAndExits6(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("w", "write_file", `{"path":"out.txt","content":"x"}`),
			fakeprovider.Call("s", "shell", `{"command":"touch pwned"}`),
			fakeprovider.Call("l", "list_directory", `{}`),
		}},
		fakeprovider.Reply{Text: "I could not write"})
	defer srv.Close()
	w := newWorld(t, srv)
	r := w.ask("write out.txt", "safe", true)
	if r.code != fault.ExitRefused {
		t.Fatalf("exit %d, want %d; stderr %s", r.code, fault.ExitRefused, r.stderr)
	}
	got := r.summary()
	if got.Status != "denied" || len(got.Denials) != 2 || got.Denials[0].Name != "write_file" || got.Denials[1].Name != "shell" {
		t.Errorf("status %q denials %+v", got.Status, got.Denials)
	}
	if got.Answer != "I could not write" {
		t.Errorf("answer %q: the run should go on after a refusal", got.Answer)
	}
	for _, f := range []string{"out.txt", "pwned"} {
		if _, err := os.Stat(filepath.Join(w.wd, f)); err == nil {
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
	r := newWorld(t, srv).ask("q", "mode", "ask", "max-steps", 8)
	if r.code != fault.ExitLimit || len(srv.Requests()) != 3 {
		t.Errorf("ask mode: exit %d after %d requests, want %d after 3", r.code, len(srv.Requests()), fault.ExitLimit)
	}
	if d := declaredNames(srv.Requests()[0]); d != "read_file,list_directory,search" {
		t.Errorf("ask mode declared %s", d)
	}
	// plan mode: read-only, and the system prompt asks for a numbered plan.
	srv2 := fakeprovider.Start(fakeprovider.Reply{Text: "1. do it"})
	defer srv2.Close()
	newWorld(t, srv2).ask("q", "mode", "plan")
	body := srv2.Requests()[0]
	if d := declaredNames(body); d != "read_file,list_directory,search" {
		t.Errorf("plan mode declared %s", d)
	}
	if sys := gjson.GetBytes(body, "messages.0.content").String(); !strings.Contains(sys, "numbered plan") {
		t.Errorf("plan mode system prompt lacks its guidance: %s", sys)
	}
	if r := newWorld(t, nil).ask("q", "mode", "yolo"); r.code != fault.ExitUsage || !strings.Contains(r.stderr, "choose ask, plan or agent") {
		t.Errorf("bad mode: exit %d stderr %q", r.code, r.stderr)
	}
}

func TestDenyToolIsNotDeclared(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("r", "read_file", `{"path":"x"}`)}},
		fakeprovider.Reply{Text: "ok"})
	defer srv.Close()
	r := newWorld(t, srv).ask("q", "deny-tool", "read_file", "deny-tool", "shell:rm *")
	if d := declaredNames(srv.Requests()[0]); strings.Contains(d, "read_file") || !strings.Contains(d, "shell") {
		t.Errorf("declared %s: read_file denied outright is hidden, shell with an argument pattern stays", d)
	}
	got := r.summary()
	if r.code != 0 || len(got.Denials) != 1 || !strings.Contains(got.Denials[0].Reason, "--deny-tool read_file") {
		t.Errorf("exit %d denials %+v: a denied call is answered and listed, and is not a --safe refusal", r.code, got.Denials)
	}
}

// policyTools adds a user tool that writes and requires approval to the
// built-in read_file, write_file (writes, requires approval) and shell
// (runs commands, requires approval).
const policyTools = `{"tools":[{"name":"stamp","description":"Stamp the work directory","command":"echo stamped > stamped.txt",
  "risk":"write","requires_approval":true}]}`

// terminal is a person at a terminal who types answers, as the main
// command's approvals read them from /dev/tty.
func terminal(answers string) *term.Prompter {
	return &term.Prompter{In: strings.NewReader(answers), Out: io.Discard}
}

// TestPolicyExitCodes is the policy table: mode × tool risk × flags ×
// terminal (and the answers typed there) → what is declared, which calls
// run, why the others were denied, and the exit code. A --safe refusal
// exits 6; any other denial leaves the exit code alone. (Where the answers
// are read from is the CLI's: cmd/ask TestApprovalsAreAskedOnTheTerminal.)
func TestPolicyExitCodes(t *testing.T) {
	t.Parallel()
	const (
		every    = "read_file,list_directory,search,edit_file,write_file,shell,stamp"
		readOnly = "read_file,list_directory,search"
		noTTY    = "-" // no terminal at all
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
		flags    []any
		tty      string // answers typed on the terminal, or noTTY
		declared string
		want     string // per call of read_file, write_file, stamp, shell: run, deny or refuse
		reason   string // in every denial's reason
		exit     int
	}{
		{name: "agent, no terminal", tty: noTTY, declared: every,
			want: "run,deny,deny,deny", reason: "no terminal to ask", exit: fault.ExitOK},
		{name: "agent --accept-edits, no terminal: commands still ask", flags: []any{"accept-edits", true}, tty: noTTY, declared: every,
			want: "run,run,deny,deny", reason: "no terminal to ask", exit: fault.ExitOK},
		{name: "agent, yes on the terminal", tty: "y\n", declared: every,
			want: "run,run,run,run", exit: fault.ExitOK},
		{name: "agent, always on the terminal", tty: "a\n", declared: every,
			want: "run,run,run,run", exit: fault.ExitOK},
		{name: "agent, no on the terminal", tty: "n\n", declared: every,
			want: "run,deny,deny,deny", reason: "declined", exit: fault.ExitOK},
		{name: "agent, one by one", tty: "o\ny\ny\nn\n", declared: every,
			want: "run,run,run,deny", reason: "declined", exit: fault.ExitOK},
		{name: "agent, o where it is not offered is asked again", tty: "o\no\ny\no\nn\no\ny\n", declared: every,
			want: "run,run,deny,run", reason: "declined", exit: fault.ExitOK},
		{name: "agent --yes", flags: []any{"yes", true}, tty: noTTY, declared: every,
			want: "run,run,run,run", exit: fault.ExitOK},
		{name: "agent --allow-tool with an argument pattern", flags: []any{"allow-tool", "shell:echo ran*"}, tty: noTTY, declared: every,
			want: "run,deny,deny,run", reason: "no terminal to ask", exit: fault.ExitOK},
		{name: "agent --allow-tool that does not match", flags: []any{"allow-tool", "shell:git *"}, tty: "n\n", declared: every,
			want: "run,deny,deny,deny", reason: "declined", exit: fault.ExitOK},
		{name: "agent --deny-tool wins over --yes and --allow-tool", flags: []any{"yes", true, "allow-tool", "shell", "deny-tool", "shell", "deny-tool", "write_*"}, tty: noTTY,
			declared: "read_file,list_directory,search,edit_file,stamp",
			want:     "run,deny,run,deny", reason: "--deny-tool", exit: fault.ExitOK},
		{name: "ask mode", flags: []any{"mode", "ask", "yes", true}, tty: "y\n", declared: readOnly,
			want: "run,deny,deny,deny", reason: "ask mode does not allow", exit: fault.ExitOK},
		{name: "plan mode", flags: []any{"mode", "plan", "allow-tool", "*"}, tty: noTTY, declared: readOnly,
			want: "run,deny,deny,deny", reason: "plan mode does not allow", exit: fault.ExitOK},
		{name: "--safe", flags: []any{"safe", true}, tty: noTTY, declared: readOnly,
			want: "run,refuse,refuse,refuse", reason: "refused by --safe", exit: fault.ExitRefused},
		{name: "--safe over --yes, --allow-tool and a yes on the terminal", flags: []any{"safe", true, "yes", true, "allow-tool", "*"}, tty: "y\n", declared: readOnly,
			want: "run,refuse,refuse,refuse", reason: "refused by --safe", exit: fault.ExitRefused},
		{name: "--safe over --deny-tool", flags: []any{"safe", true, "deny-tool", "shell"}, tty: noTTY, declared: readOnly,
			want: "run,refuse,refuse,refuse", reason: "refused by --safe", exit: fault.ExitRefused},
		{name: "--safe in ask mode", flags: []any{"safe", true, "mode", "ask"}, tty: noTTY, declared: readOnly,
			want: "run,refuse,refuse,refuse", reason: "refused by --safe", exit: fault.ExitRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.Start(fakeprovider.Reply{Calls: calls}, fakeprovider.Reply{Text: "done"})
			defer srv.Close()
			w := newWorld(t, srv)
			for name, content := range map[string]string{"in.txt": "input\n", "tools.json": policyTools} {
				if err := os.WriteFile(filepath.Join(w.wd, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.tty != noTTY {
				w.prompter = terminal(tt.tty)
			}
			r := w.ask("go", append([]any{"tools-file", "tools.json"}, tt.flags...)...)

			if r.code != tt.exit {
				t.Errorf("exit %d, want %d; stderr %s", r.code, tt.exit, r.stderr)
			}
			if r.Result == nil {
				t.Fatalf("the run was not built: %v", r.err)
			}
			got := r.summary()
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
					_, err := os.Stat(filepath.Join(w.wd, file))
					if ran := err == nil; ran == denied {
						t.Errorf("%s: denied %v, but %s exists %v", c.Name, denied, file, ran)
					}
				}
			}
			if o := strings.Join(outcomes, ","); o != tt.want {
				t.Errorf("calls %s, want %s; denials %+v", o, tt.want, got.Denials)
			}
			wantStatus := "completed"
			if tt.exit == fault.ExitRefused {
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
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("s", "shell", `{"command":"echo ran > shell.txt"}`)}},
		fakeprovider.Reply{Text: "not reached"})
	defer srv.Close()
	w := newWorld(t, srv)
	nobody, typing := io.Pipe() // a terminal nobody answers
	defer typing.Close()
	w.prompter = &term.Prompter{In: nobody, Out: io.Discard}
	r := w.ask("go", "timeout", "2s")
	if r.code != fault.ExitTimeout {
		t.Fatalf("exit %d, want %d; stderr %s", r.code, fault.ExitTimeout, r.stderr)
	}
	got := r.summary()
	// The denial proves the timeout came while the question was open, not
	// during the request.
	if got.Status != "timeout" || len(got.Denials) != 1 || !strings.Contains(got.Denials[0].Reason, "timeout reached") {
		t.Errorf("status %q denials %+v: want the open question ended by the timeout", got.Status, got.Denials)
	}
	if _, err := os.Stat(filepath.Join(w.wd, "shell.txt")); err == nil {
		t.Error("the unanswered call ran")
	}
}

// Without a terminal, a call of the file tools is denied unless something
// the user gave allows it (DESIGN §5 Approvals): --accept-edits (edits
// inside the working directory; commands still ask), an allow rule, or
// --yes. A write into .git needs a person's yes whatever is given. The
// model is told why, works around it, and the run ends completed, exit 0.
func TestEditsNeedApprovalWithoutATerminal(t *testing.T) {
	t.Parallel()
	edit := fakeprovider.Call("e1", "edit_file", `{"path":"notes.txt","old_text":"teh","new_text":"the"}`)
	overwrite := fakeprovider.Call("w1", "write_file", `{"path":"notes.txt","content":"new\n"}`)
	gitConfig := fakeprovider.Call("g1", "write_file", `{"path":".git/config","content":"[core]\n\tfsmonitor = touch PWN\n"}`)
	shellCall := fakeprovider.Call("s1", "shell", `{"command":"echo ran > ran.txt"}`)
	const notes, config = "fix teh typo\n", "[core]\n"
	tests := []struct {
		name       string
		flags      []any
		calls      []providers.ToolCall
		wantNotes  string
		wantConfig string
		wantShell  bool     // ran.txt made
		wantDenied []string // "NAME: REASON-SUBSTRING"
	}{
		{"an edit is denied", nil, []providers.ToolCall{edit}, notes, config, false,
			[]string{"edit_file: there is no terminal to ask; rerun with --accept-edits"}},
		{"an overwrite is denied", nil, []providers.ToolCall{overwrite}, notes, config, false,
			[]string{"write_file: there is no terminal to ask; rerun with --accept-edits"}},
		{"--accept-edits: the edit runs, a command is still denied", []any{"accept-edits", true}, []providers.ToolCall{edit, shellCall},
			"fix the typo\n", config, false, []string{"shell: needs approval and there is no terminal"}},
		{"--accept-edits: an overwrite runs", []any{"accept-edits", true}, []providers.ToolCall{overwrite}, "new\n", config, false, nil},
		{"--accept-edits never writes .git/config", []any{"accept-edits", true}, []providers.ToolCall{gitConfig}, notes, config, false,
			[]string{"write_file: only a yes on a terminal allows that (--yes, --accept-edits and --allow-tool do not)"}},
		{"--accept-edits beside a .git/config write", []any{"accept-edits", true}, []providers.ToolCall{edit, gitConfig}, notes, config, false,
			[]string{"edit_file: ", "write_file: only a yes on a terminal"}},
		{"the config file's tools.accept_edits", []any{"profile", "edits"}, []providers.ToolCall{edit}, "fix the typo\n", config, false, nil},
		{"an allow rule", []any{"allow-tool", "edit_file"}, []providers.ToolCall{edit, overwrite}, "fix the typo\n", config, false,
			[]string{"write_file: there is no terminal to ask"}},
		{"--yes", []any{"yes", true}, []providers.ToolCall{edit, shellCall}, "fix the typo\n", config, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, content := range map[string]string{"notes.txt": notes, ".git/config": config} {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{}
			if slices.Contains(tt.flags, any("profile")) {
				cfg := filepath.Join(t.TempDir(), "config.json")
				if err := os.WriteFile(cfg, []byte(`{"profiles":{"edits":{"tools":{"accept_edits":true}}}}`), 0o600); err != nil {
					t.Fatal(err)
				}
				env["ASK_CONFIG"] = cfg
			}
			srv := fakeprovider.Start(fakeprovider.Reply{Calls: tt.calls}, fakeprovider.Reply{Text: "worked around it"})
			defer srv.Close()
			w := newWorld(t, srv)
			w.wd = dir
			for k, v := range env {
				w.with(k, v)
			}
			r := w.ask("fix the typo", tt.flags...)
			if r.Result == nil {
				t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
			}
			out := r.summary()
			if r.code != 0 || out.Status != "completed" || out.Answer != "worked around it" {
				t.Errorf("exit %d, status %s, answer %q; want 0, completed: %s", r.code, out.Status, out.Answer, r.stderr)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != tt.wantNotes {
				t.Errorf("notes.txt %q, want %q", got, tt.wantNotes)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, ".git/config")); string(got) != tt.wantConfig {
				t.Errorf(".git/config %q, want %q", got, tt.wantConfig)
			}
			if _, err := os.Stat(filepath.Join(dir, "ran.txt")); (err == nil) != tt.wantShell {
				t.Errorf("the shell call ran: %v, want %v", err == nil, tt.wantShell)
			}
			var denied []string
			for _, d := range out.Denials {
				denied = append(denied, d.Name+": "+d.Reason)
			}
			if len(denied) != len(tt.wantDenied) {
				t.Fatalf("denials %q, want %q", denied, tt.wantDenied)
			}
			for i, w := range tt.wantDenied {
				name, reason, _ := strings.Cut(w, ": ")
				if !strings.HasPrefix(denied[i], name+": ") || !strings.Contains(denied[i], reason) {
					t.Errorf("denial %q, want %q", denied[i], w)
				}
			}
		})
	}
}

// A base URL that is not a URL is bad input, found before any request.
func TestMalformedBaseURLIsUsage(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"http://[::1", "ht!tp://x", "ftp://example.com/v1", "http://"} {
		t.Run(base, func(t *testing.T) {
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "never asked"})
			defer srv.Close()
			for _, how := range [][]any{{"base-url", base}, {}} {
				w := newWorld(t, srv)
				if len(how) == 0 {
					w.with("ASK_BASE_URL", base)
				}
				r := w.ask("q", how...)
				if r.code != fault.ExitUsage {
					t.Errorf("%v: exit %d, want 2; stderr: %s", how, r.code, r.stderr)
				}
				if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 || !strings.Contains(r.stderr, "base URL") {
					t.Errorf("%v: stderr %q, want one line about the base URL", how, r.stderr)
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests were sent", n)
			}
		})
	}
}
