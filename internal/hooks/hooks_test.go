package hooks

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRun runs one hook of each event with each kind of answer Claude
// Code's hooks reference describes (https://code.claude.com/docs/en/hooks:
// exit codes, hookSpecificOutput, the older top-level decision), and the
// answers ask reads as failures, which deny before a call.
func TestRun(t *testing.T) {
	t.Parallel()
	const deny = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not today"}}`
	tests := []struct {
		name, event, command string
		timeout              int
		want, reason         string // decision, and the start of the reason
		context              string
	}{
		{"exit 0, nothing said", PreToolUse, "exit 0", 0, None, "", ""},
		{"plain text is no answer", PreToolUse, "echo fine", 0, None, "", ""},
		{"permissionDecision deny", PreToolUse, "echo '" + deny + "'", 0, Deny, "not today", ""},
		{"permissionDecision allow", PreToolUse, `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`, 0, Allow, "", ""},
		{"permissionDecision ask", PreToolUse, `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"sure?"}}'`, 0, Ask, "sure?", ""},
		{"older decision approve", PreToolUse, `echo '{"decision":"approve","reason":"ok"}'`, 0, Allow, "ok", ""},
		{"older decision block", PreToolUse, `echo '{"decision":"block","reason":"no"}'`, 0, Deny, "no", ""},
		{"continue false", PreToolUse, `echo '{"continue":false,"stopReason":"halt"}'`, 0, Deny, "halt", ""},
		{"exit 2, stderr is the reason", PreToolUse, "echo 'rm is not for you' >&2; exit 2", 0, Deny, "rm is not for you", ""},
		{"exit 2, no stderr", PreToolUse, "exit 2", 0, Deny, "blocked by the PreToolUse hook", ""},
		{"exit 1 denies", PreToolUse, "echo oops >&2; exit 1", 0, Deny, `PreToolUse hook "echo oops >&2; exit 1" failed (exit 1): oops`, ""},
		{"nonsense JSON denies", PreToolUse, "echo '{not json'", 0, Deny, "PreToolUse hook", ""},
		{"permissionDecision defer", PreToolUse, `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer","permissionDecisionReason":"a reviewer decides"}}'`, 0, Defer, "a reviewer decides", ""},
		{"unknown permissionDecision denies", PreToolUse, `echo '{"hookSpecificOutput":{"permissionDecision":"maybe"}}'`, 0, Deny, "PreToolUse hook", ""},
		{"another event's answer denies", PreToolUse, `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse"}}'`, 0, Deny, "PreToolUse hook", ""},
		{"timeout denies", PreToolUse, "sleep 20", 1, Deny, `PreToolUse hook "sleep 20" timed out after 1s`, ""},
		{"a missing program denies", PreToolUse, "./no-such-hook", 0, Deny, "PreToolUse hook", ""},
		{"PostToolUse block", PostToolUse, `echo '{"decision":"block","reason":"lint failed"}'`, 0, Block, "lint failed", ""},
		{"PostToolUse exit 2", PostToolUse, "echo 'lint failed' >&2; exit 2", 0, Block, "lint failed", ""},
		{"Stop block", Stop, `echo '{"decision":"block","reason":"tests first"}'`, 0, Block, "tests first", ""},
		{"Stop failure is an error, not a block", Stop, "exit 1", 0, Error, "Stop hook", ""},
		{"UserPromptSubmit failure blocks", UserPromptSubmit, "exit 1", 0, Block, "UserPromptSubmit hook", ""},
		{"UserPromptSubmit context", UserPromptSubmit, "echo 'on branch main'", 0, None, "", "on branch main"},
		{"SessionStart additionalContext", SessionStart, `echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"be kind"}}'`, 0, None, "", "be kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var recs []Record
			r := &Runner{Config: Config{tt.event: {{Hooks: []Command{{Type: "command", Command: tt.command, Timeout: tt.timeout}}}}},
				Dir: t.TempDir(), Env: []string{"PATH=/usr/bin:/bin"}, OnRecord: func(rec Record) { recs = append(recs, rec) }}
			start := time.Now()
			v := r.Run(context.Background(), tt.event, Input{ToolName: "shell", ToolInput: json.RawMessage(`{"command":"rm -rf x"}`)})
			if v.Decision != tt.want || !strings.HasPrefix(v.Reason, tt.reason) || v.Context != tt.context {
				t.Errorf("got %s %q (context %q), want %s %q… (context %q)", v.Decision, v.Reason, v.Context, tt.want, tt.reason, tt.context)
			}
			if strings.Contains(v.Reason, "\n") {
				t.Errorf("reason %q is not one line", v.Reason)
			}
			if len(recs) != 1 || recs[0].Decision != tt.want || recs[0].Command != tt.command || recs[0].Event != tt.event {
				t.Errorf("records %+v, want one of the decision", recs)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %s", took)
			}
		})
	}
}

// The hook reads Claude Code's fields on stdin, and a deny wins over the
// allows of other hooks of the same call, whatever their order.
func TestPayloadAndDenyWins(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	allow := Command{Type: "command", Command: `cat > input.json; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`}
	deny := Command{Type: "command", Command: "echo no >&2; exit 2"}
	r := &Runner{Config: Config{PreToolUse: {{Matcher: "Bash", Hooks: []Command{deny}}, {Matcher: "shell", Hooks: []Command{allow}}}},
		Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, SessionID: "run-1", TranscriptPath: "/t.jsonl"}
	v := r.Run(context.Background(), PreToolUse, Input{ToolName: "shell", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolUseID: "c1"})
	if v.Decision != Deny || v.Reason != "no" {
		t.Errorf("got %s %q, want the deny", v.Decision, v.Reason)
	}
	var in map[string]any
	b, err := os.ReadFile(dir + "/input.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"session_id": "run-1", "transcript_path": "/t.jsonl", "cwd": dir, "hook_event_name": "PreToolUse",
		"tool_name": "shell", "tool_use_id": "c1", "permission_mode": "default"}
	for k, w := range want {
		if in[k] != w {
			t.Errorf("%s = %v, want %v", k, in[k], w)
		}
	}
	if cmd, _ := in["tool_input"].(map[string]any)["command"].(string); cmd != "ls" {
		t.Errorf("tool_input = %v, want the call's arguments", in["tool_input"])
	}
}

// Of several hooks on one call, a deny wins over a defer and a defer over
// an allow, whatever their order.
func TestDeferRanks(t *testing.T) {
	t.Parallel()
	answer := func(d string) Command {
		return Command{Type: "command", Command: `echo '{"hookSpecificOutput":{"permissionDecision":"` + d + `"}}'`}
	}
	tests := []struct {
		hooks []Command
		want  string
	}{
		{[]Command{answer(Allow), answer(Defer)}, Defer},
		{[]Command{answer(Defer), answer(Allow)}, Defer},
		{[]Command{answer(Defer), answer(Ask)}, Defer},
		{[]Command{answer(Defer), answer(Deny)}, Deny},
		{[]Command{answer(Deny), answer(Defer)}, Deny},
	}
	for _, tt := range tests {
		r := &Runner{Config: Config{PreToolUse: {{Hooks: tt.hooks}}}, Dir: t.TempDir(), Env: []string{"PATH=/usr/bin:/bin"}}
		if v := r.Run(context.Background(), PreToolUse, Input{ToolName: "shell"}); v.Decision != tt.want {
			t.Errorf("%v: got %s, want %s", tt.hooks, v.Decision, tt.want)
		}
	}
}

// A matcher is a regular expression over the whole name, ask's or Claude
// Code's; empty and * match every tool.
func TestMatcher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		matcher, tool string
		want          bool
	}{
		{"", "shell", true},
		{"*", "read_file", true},
		{"Bash", "shell", true},
		{"shell", "shell", true},
		{"Edit|Write", "write_file", true},
		{"Edit|Write", "edit_file", true},
		{"Edit|Write", "shell", false},
		{"Read", "read_file", true},
		{"Grep", "search", true},
		{"LS", "list_directory", true},
		{"Bas", "shell", false}, // a plain name matches whole
		{"mcp__.*", "mcp__fs__read", true},
		{"fs__.*", "fs__read", true},
	}
	for _, tt := range tests {
		if got := (Group{Matcher: tt.matcher}).matches(tt.tool); got != tt.want {
			t.Errorf("matcher %q on %s: %v, want %v", tt.matcher, tt.tool, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	one := []Command{{Type: "command", Command: "true"}}
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"fine", Config{PreToolUse: {{Matcher: "Bash", Hooks: one}}}, ""},
		{"unknown event", Config{"Notification": {{Hooks: one}}}, "unknown hook event"},
		{"bad matcher", Config{PreToolUse: {{Matcher: "(", Hooks: one}}}, "[0].matcher"},
		{"no hooks", Config{Stop: {{}}}, "[0].hooks: is empty"},
		{"other type", Config{Stop: {{Hooks: []Command{{Type: "prompt", Command: "x"}}}}}, `"prompt": ask runs hooks of type "command" only`},
		{"no command", Config{Stop: {{Hooks: []Command{{Type: "command"}}}}}, "command: is empty"},
		{"negative timeout", Config{Stop: {{Hooks: []Command{{Type: "command", Command: "x", Timeout: -1}}}}}, "timeout"},
	}
	for _, tt := range tests {
		_, msg := tt.c.Check()
		if tt.want == "" && msg != "" || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, msg, tt.want)
		}
	}
}
