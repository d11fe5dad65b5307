package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

func listedNames(t *testing.T, out string) []string {
	t.Helper()
	declared, err := providers.ParseTools([]byte(out))
	if err != nil {
		t.Fatalf("tools list is not standardized tools: %v\n%s", err, out)
	}
	var names []string
	for _, d := range declared {
		names = append(names, d.Name)
	}
	return names
}

func TestToolsList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flags []string
		want  string
	}{
		{nil, "read_file list_directory search edit_file write_file shell"},
		{[]string{"--mode", "ask"}, "read_file list_directory search"},
		{[]string{"--mode", "plan"}, "read_file list_directory search"},
		{[]string{"--safe"}, "read_file list_directory search"},
		{[]string{"--deny-tool", "shell", "--deny-tool", "search"}, "read_file list_directory edit_file write_file"},
		{[]string{"--deny-tool", "shell:rm *"}, "read_file list_directory search edit_file write_file shell"},
		{[]string{"--no-tools"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.flags, " "), func(t *testing.T) {
			r := runAsk(t, askEnv{}, append([]string{"tools", "list"}, tt.flags...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := strings.Join(listedNames(t, r.stdout), " "); got != tt.want {
				t.Errorf("declared %q, want %q", got, tt.want)
			}
		})
	}
}

// TestToolsListMatchesTheRequest: the tools listed are the tools the loop
// declares to the model under the same flags.
func TestToolsListMatchesTheRequest(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	list := runAsk(t, askEnv{wd: wd}, "tools", "list", "--mode", "ask")
	req := runAsk(t, askEnv{wd: wd}, "provider", "request", "-p", "openai", "--mode", "ask", "x")
	var body struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal([]byte(req.stdout), &body); err != nil {
		t.Fatal(err)
	}
	formatted := runAsk(t, askEnv{stdin: list.stdout}, "provider", "format-tools", "-p", "openai")
	if strings.TrimSpace(formatted.stdout) != string(body.Tools) {
		t.Errorf("tools list | format-tools\n%s\nrequest tools\n%s", formatted.stdout, body.Tools)
	}
}

func TestToolsListTable(t *testing.T) {
	t.Parallel()
	r := runAsk(t, askEnv{tty: true}, "tools", "list")
	for _, want := range []string{"NAME", "RISK", "read_file", "shell", "exec", "asks"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := runAsk(t, askEnv{tty: true}, "tools", "list", "--no-tools"); !strings.Contains(r.stdout, "no tools are offered") {
		t.Errorf("--no-tools table: %q", r.stdout)
	}
}

func TestToolsShow(t *testing.T) {
	t.Parallel()
	r := runAsk(t, askEnv{}, "tools", "show", "shell")
	var info tools.Info
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil || r.code != 0 {
		t.Fatalf("exit %d, %v: %s%s", r.code, err, r.stdout, r.stderr)
	}
	if info.Name != "shell" || info.Risk != tools.Exec || !info.RequiresApproval || !strings.Contains(string(info.Parameters), `"command"`) || info.Description == "" {
		t.Errorf("shell = %+v", info)
	}
}

// TestToolsRun runs calls under the loop's rules: the policy first,
// denied calls as error results, every call answered in order.
func TestToolsRun(t *testing.T) {
	t.Parallel()
	call := func(id, name, args string) providers.ToolCall {
		return providers.ToolCall{ID: id, Name: name, Arguments: args}
	}
	tests := []struct {
		name     string
		flags    []string
		calls    []providers.ToolCall
		wantCode int
		want     []string // per result: "ok: CONTENT-SUBSTRING" or "error: CONTENT-SUBSTRING"
		wantErr  string
	}{
		{name: "reads", calls: []providers.ToolCall{call("c1", "read_file", `{"path":"a.txt"}`), call("c2", "list_directory", `{}`)},
			want: []string{"ok: 1: alpha", "ok: a.txt"}},
		{name: "unknown tool", calls: []providers.ToolCall{call("c1", "frobnicate", `{}`)}, want: []string{"error: frobnicate"}},
		{name: "invalid arguments", calls: []providers.ToolCall{call("c1", "read_file", `{"path":`)}, want: []string{"error: "}},
		{name: "outside the workdir", calls: []providers.ToolCall{call("c1", "read_file", `{"path":"../secret.txt"}`)}, want: []string{"error: "}},
		{name: "ask mode refuses a write", flags: []string{"--mode", "ask"}, calls: []providers.ToolCall{call("c1", "write_file", `{"path":"b.txt","content":"x"}`), call("c2", "read_file", `{"path":"a.txt"}`)},
			want: []string{"error: denied: write_file writes files, which ask mode does not allow", "ok: alpha"}, wantErr: "ask: write_file denied"},
		{name: "safe refuses and exits 6", flags: []string{"--safe"}, calls: []providers.ToolCall{call("c1", "shell", `{"command":"touch x"}`)},
			wantCode: exitRefused, want: []string{"error: denied: refused by --safe: shell runs commands"}, wantErr: "1 tool call refused by policy: shell"},
		{name: "approval without a terminal", calls: []providers.ToolCall{call("c1", "shell", `{"command":"echo hi"}`)},
			want: []string{"error: denied: shell needs approval and there is no terminal to ask"}, wantErr: "ask: shell denied: shell needs approval"},
		{name: "--yes approves", flags: []string{"--yes"}, calls: []providers.ToolCall{call("c1", "shell", `{"command":"echo hi"}`)}, want: []string{"ok: hi"}},
		{name: "an allow pattern approves", flags: []string{"--allow-tool", "shell:echo *"}, calls: []providers.ToolCall{call("c1", "shell", `{"command":"echo hi"}`)}, want: []string{"ok: hi"}},
		{name: "deny wins", flags: []string{"--yes", "--deny-tool", "shell:echo *"}, calls: []providers.ToolCall{call("c1", "shell", `{"command":"echo hi"}`)},
			want: []string{"error: denied: --deny-tool shell:echo * matches it"}, wantErr: "ask: shell denied: --deny-tool shell:echo * matches it"},
		{name: "quiet", flags: []string{"-q", "--mode", "plan"}, calls: []providers.ToolCall{call("c1", "shell", `{"command":"ls"}`)},
			want: []string{"error: denied: shell runs commands, which plan mode does not allow"}},
		{name: "timeout", flags: []string{"--yes", "--timeout", "200ms"}, calls: []providers.ToolCall{call("c1", "shell", `{"command":"sleep 5"}`)},
			wantCode: exitTimeout, want: []string{"error: killed"}, wantErr: "stopped: --timeout 200ms reached"},
		{name: "no calls", calls: []providers.ToolCall{}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			wd := filepath.Join(root, "work")
			os.Mkdir(wd, 0o755)
			os.WriteFile(filepath.Join(wd, "a.txt"), []byte("alpha\n"), 0o644)
			os.WriteFile(filepath.Join(root, "secret.txt"), []byte("secret\n"), 0o644)
			in, _ := json.Marshal(tt.calls)
			r := runAsk(t, askEnv{wd: wd, stdin: string(in)}, append([]string{"tools", "run"}, tt.flags...)...)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr %s", r.code, tt.wantCode, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.wantErr) || tt.wantErr == "" && r.stderr != "" {
				t.Errorf("stderr %q, want %q", r.stderr, tt.wantErr)
			}
			results, err := providers.ParseToolResultsJSON([]byte(r.stdout))
			if err != nil && len(tt.calls) > 0 {
				t.Fatalf("stdout is not tool results: %v\n%s", err, r.stdout)
			}
			if len(tt.calls) == 0 && strings.TrimSpace(r.stdout) != "[]" {
				t.Errorf("no calls gave %q, want []", r.stdout)
			}
			if len(results) != len(tt.want) {
				t.Fatalf("%d results, want %d: %s", len(results), len(tt.want), r.stdout)
			}
			for i, res := range results {
				kind, text, _ := strings.Cut(tt.want[i], ": ")
				if res.ID != tt.calls[i].ID || res.Name != tt.calls[i].Name || res.IsError != (kind == "error") || !strings.Contains(res.Content, text) {
					t.Errorf("result %d = %+v, want %s", i, res, tt.want[i])
				}
				if strings.Contains(res.Content, "secret") && !strings.Contains(res.Content, "secret.txt") {
					t.Errorf("a file outside the workdir was read: %q", res.Content)
				}
			}
			if _, err := os.Stat(filepath.Join(wd, "b.txt")); err == nil {
				t.Error("a refused write happened")
			}
		})
	}
}
