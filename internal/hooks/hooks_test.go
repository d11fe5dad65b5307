package hooks

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
		"tool_name": "Bash", "ask_tool_name": "shell", "tool_use_id": "c1", "permission_mode": "default"}
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
		{"mcp__.*", "fs__read", true},
		{"mcp__memory__.*", "memory__create_entities", true},
		{"mcp__memory__.*", "fs__read", false},
		{"mcp__fs__read", "fs__read", true},
		{"fs__.*", "fs__read", true},
		{"mcp__.*", "deploy", false}, // a user tool is no MCP tool
	}
	r := &Runner{IsMCP: func(tool string) bool { return strings.Contains(tool, "__") }}
	for _, tt := range tests {
		if got := (Group{Matcher: tt.matcher}).matches(tt.tool, r.ClaudeName(tt.tool)); got != tt.want {
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
		{"a prompt hook is skipped, not refused", Config{Stop: {{Hooks: []Command{{Type: "prompt", Prompt: "done?"}}}}}, ""},
		{"other type", Config{Stop: {{Hooks: []Command{{Type: "comand", Command: "x"}}}}}, `"comand": ask runs hooks of type "command" (and skips "prompt" and "agent" hooks)`},
		{"no command", Config{Stop: {{Hooks: []Command{{Type: "command"}}}}}, "command: is empty"},
		{"negative timeout", Config{Stop: {{Hooks: []Command{{Type: "command", Command: "x", Timeout: -1}}}}}, "timeout"},
	}
	for _, tt := range tests {
		_, msg := tt.c.Check()
		if tt.want == "" && msg != "" || tt.want != "" && !strings.Contains(msg, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, msg, tt.want)
		}
	}
}

// Claude Code's "prompt" hooks are skipped, each named once, and never
// run: the command hooks beside them still do.
func TestPromptHooksAreSkipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := Config{Stop: {{Hooks: []Command{{Type: "prompt", Prompt: "is the task done?"}, {Type: "command", Command: "touch ran"}}}}}
	if got, want := c.Skipped(), []string{`hooks.Stop[0].hooks[0]: ask does not run "prompt" hooks; skipped`}; !slices.Equal(got, want) {
		t.Errorf("Skipped() = %q, want %q", got, want)
	}
	var recs []Record
	r := &Runner{Config: c, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, OnRecord: func(rec Record) { recs = append(recs, rec) }}
	if v := r.Run(context.Background(), Stop, Input{}); v.Decision != None {
		t.Errorf("decision %s, want none", v.Decision)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err != nil || len(recs) != 1 {
		t.Errorf("the command hook beside it did not run alone: %v, %d records", err, len(recs))
	}
}

// "continue": false ends the run from any event: OnStop is told the
// stopReason, and a PreToolUse hook's call is denied too.
func TestContinueFalseStops(t *testing.T) {
	t.Parallel()
	for _, event := range []string{PreToolUse, PostToolUse, Stop, SessionStart, UserPromptSubmit} {
		var stopped []string
		r := &Runner{Config: Config{event: {{Hooks: []Command{{Type: "command", Command: `echo '{"continue": false, "stopReason": "build is red"}'`}}}}},
			Dir: t.TempDir(), Env: []string{"PATH=/usr/bin:/bin"}, OnStop: func(ev, reason string) { stopped = append(stopped, ev+": "+reason) }}
		v := r.Run(context.Background(), event, Input{ToolName: "shell", ToolInput: json.RawMessage(`{"command":"ls"}`)})
		if !v.Stop || v.StopReason != "build is red" || !slices.Equal(stopped, []string{event + ": build is red"}) {
			t.Errorf("%s: stop %v %q, told %q", event, v.Stop, v.StopReason, stopped)
		}
		if event == PreToolUse && v.Decision != Deny {
			t.Errorf("PreToolUse: decision %s, want deny", v.Decision)
		}
	}
}

// tool_input carries Claude Code's argument names beside ask's, so that a
// script reading .tool_input.file_path sees the file: absolute, as Claude
// Code gives it.
func TestClaudeToolInput(t *testing.T) {
	t.Parallel()
	r := &Runner{Dir: "/work/proj", IsMCP: func(tool string) bool { return tool == "memory__add" }}
	tests := []struct {
		tool, args, wantName string
		want                 map[string]any
	}{
		{"edit_file", `{"path":"a/.env","old_text":"x","new_text":"y"}`, "Edit",
			map[string]any{"path": "a/.env", "file_path": "/work/proj/a/.env", "old_text": "x", "old_string": "x", "new_text": "y", "new_string": "y"}},
		{"write_file", `{"path":"/abs/f.ts","content":"c"}`, "Write", map[string]any{"path": "/abs/f.ts", "file_path": "/abs/f.ts", "content": "c"}},
		{"read_file", `{"path":"go.mod","limit":3}`, "Read", map[string]any{"path": "go.mod", "file_path": "/work/proj/go.mod", "limit": 3.0}},
		{"shell", `{"command":"grep -r x .","timeout_seconds":5}`, "Bash", map[string]any{"command": "grep -r x .", "timeout_seconds": 5.0, "timeout": 5000.0}},
		{"search", `{"pattern":"TODO","path":"cmd"}`, "Grep", map[string]any{"pattern": "TODO", "path": "cmd"}},
		{"list_directory", `{"path":"."}`, "LS", map[string]any{"path": "."}},
		{"memory__add", `{"text":"hi"}`, "mcp__memory__add", map[string]any{"text": "hi"}},
		{"deploy", `{"env":"prod"}`, "deploy", map[string]any{"env": "prod"}},
	}
	for _, tt := range tests {
		b, err := r.payload(PreToolUse, Input{ToolName: tt.tool, ToolInput: json.RawMessage(tt.args)})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			ToolName    string         `json:"tool_name"`
			AskToolName string         `json:"ask_tool_name"`
			ToolInput   map[string]any `json:"tool_input"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.ToolName != tt.wantName || got.AskToolName != tt.tool || !maps.Equal(got.ToolInput, tt.want) {
			t.Errorf("%s: %s %s %v, want %s %v", tt.tool, got.ToolName, got.AskToolName, got.ToolInput, tt.wantName, tt.want)
		}
	}
}

// PreCompact and PostCompact hooks read Claude Code's payload: the trigger,
// PreCompact's custom_instructions and PostCompact's compact_summary; their
// matcher is the trigger, so a "manual" group never runs for ask's own
// compaction.
func TestCompactPayload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	save := func(name string) Command { return Command{Type: "command", Command: "cat > " + name} }
	none := ""
	r := &Runner{Config: Config{
		PreCompact:  {{Matcher: "manual", Hooks: []Command{save("manual.json")}}, {Matcher: "auto", Hooks: []Command{save("pre.json")}}},
		PostCompact: {{Hooks: []Command{save("post.json")}}},
	}, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, SessionID: "run-1", TranscriptPath: "/t.jsonl"}
	r.Run(context.Background(), PreCompact, Input{Trigger: "auto", CustomInstructions: &none})
	r.Run(context.Background(), PostCompact, Input{Trigger: "auto", CompactSummary: "the tests fail on value_17"})
	read := func(name string) map[string]any {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var in map[string]any
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		return in
	}
	pre, post := read("pre.json"), read("post.json")
	if pre["hook_event_name"] != PreCompact || pre["trigger"] != "auto" || pre["custom_instructions"] != "" || pre["session_id"] != "run-1" {
		t.Errorf("PreCompact payload %v", pre)
	}
	if post["hook_event_name"] != PostCompact || post["trigger"] != "auto" || post["compact_summary"] != "the tests fail on value_17" {
		t.Errorf("PostCompact payload %v", post)
	}
	if _, err := os.Stat(dir + "/manual.json"); err == nil {
		t.Error("the manual group ran for an automatic compaction")
	}
}
