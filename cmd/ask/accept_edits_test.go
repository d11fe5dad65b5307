package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

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
		flags      []string
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
		{"--accept-edits: the edit runs, a command is still denied", []string{"--accept-edits"}, []providers.ToolCall{edit, shellCall},
			"fix the typo\n", config, false, []string{"shell: needs approval and there is no terminal"}},
		{"--accept-edits: an overwrite runs", []string{"--accept-edits"}, []providers.ToolCall{overwrite}, "new\n", config, false, nil},
		{"--accept-edits never writes .git/config", []string{"--accept-edits"}, []providers.ToolCall{gitConfig}, notes, config, false,
			[]string{"write_file: only a yes on a terminal allows that (--yes, --accept-edits and --allow-tool do not)"}},
		{"--accept-edits beside a .git/config write", []string{"--accept-edits"}, []providers.ToolCall{edit, gitConfig}, notes, config, false,
			[]string{"edit_file: ", "write_file: only a yes on a terminal"}},
		{"the config file's tools.accept_edits", []string{"--profile", "edits"}, []providers.ToolCall{edit}, "fix the typo\n", config, false, nil},
		{"an allow rule", []string{"--allow-tool", "edit_file"}, []providers.ToolCall{edit, overwrite}, "fix the typo\n", config, false,
			[]string{"write_file: there is no terminal to ask"}},
		{"--yes", []string{"--yes"}, []providers.ToolCall{edit, shellCall}, "fix the typo\n", config, true, nil},
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
			if slices.Contains(tt.flags, "--profile") {
				cfg := filepath.Join(t.TempDir(), "config.json")
				if err := os.WriteFile(cfg, []byte(`{"profiles":{"edits":{"tools":{"accept_edits":true}}}}`), 0o600); err != nil {
					t.Fatal(err)
				}
				env["ASK_CONFIG"] = cfg
			}
			srv := fakeprovider.Start(fakeprovider.Reply{Calls: tt.calls}, fakeprovider.Reply{Text: "worked around it"})
			defer srv.Close()
			r := runAsk(t, askEnv{server: srv, wd: dir, env: env},
				append(append([]string{"--json"}, tt.flags...), "fix the typo")...)
			var out struct {
				Status  string `json:"status"`
				Answer  string `json:"answer"`
				Denials []struct{ Name, Reason string }
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
			}
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
