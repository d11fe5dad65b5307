// Package hooks runs the programs the user's config file names at points
// of a run, in Claude Code's hook format, so that a script written for
// Claude Code works unchanged (DESIGN §5, Hooks). The format follows
// Claude Code's hooks reference, https://code.claude.com/docs/en/hooks
// (formerly https://docs.anthropic.com/en/docs/claude-code/hooks): the
// events, the matcher (a regular expression over the tool's name), the
// JSON a hook reads on stdin, the exit codes (0 go on, 2 block with
// stderr as the reason) and the JSON answers on stdout
// (hookSpecificOutput.permissionDecision for PreToolUse, the older
// top-level decision approve/block, decision "block" for PostToolUse,
// Stop and UserPromptSubmit, and "continue": false).
//
// The payload is Claude Code's: tool_name is Claude Code's name for the
// tool (Bash for shell, mcp__SERVER__TOOL for an MCP tool), tool_input
// carries Claude Code's argument names (file_path, old_string, ...) beside
// ask's own, and ask_tool_name gives ask's name.
//
// Unlike Claude Code, a PreToolUse or UserPromptSubmit hook that fails
// (any other exit code), times out or answers what cannot be read denies:
// a guard that cannot answer is never a silent allow.
package hooks

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The events of Claude Code's format that a run of ask has.
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	Stop             = "Stop"
	// SubagentStop: a child run of the agent tool ended (recorded; a
	// block does not send the child back).
	SubagentStop = "SubagentStop"
	SessionEnd   = "SessionEnd"
	// PreCompact and PostCompact come before and after a compaction
	// of the conversation; their matcher is the trigger ("auto").
	PreCompact  = "PreCompact"
	PostCompact = "PostCompact"
)

// Events are the events a config file may name, in the order a run meets
// them.
var Events = []string{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact, PostCompact, Stop, SubagentStop, SessionEnd}

// DefaultTimeout is a hook's time limit when it names none (Claude Code's).
const DefaultTimeout = 60 * time.Second

// Decisions, as the hook event records them.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
	// Defer pauses the call for `ask resume`; it is asked again then.
	Defer = "defer"
	Block = "block" // PostToolUse, Stop, UserPromptSubmit
	None  = "none"  // the hook said nothing: the run goes on as it would
	Error = "error" // a hook of an event that cannot deny failed
)

// Config is the config file's "hooks" object: groups by event.
type Config map[string][]Group

// Group is one entry of an event's list: the hooks to run for the tools
// Matcher names.
type Group struct {
	// Matcher is a regular expression a tool's whole name must match,
	// ask's or Claude Code's (Bash for shell); "" or "*" match every tool.
	// Only the tool events use it.
	Matcher string    `json:"matcher"`
	Hooks   []Command `json:"hooks"`
}

// Command is one hook: a command line run by /bin/sh.
type Command struct {
	// Type is "command", the only type ask runs; the types of Claude
	// Code's that ask does not run (skippedTypes) are skipped with a
	// warning.
	Type    string `json:"type"`
	Command string `json:"command"`
	// Prompt and Model belong to Claude Code's "prompt" hooks, read so
	// that a config holding one is not refused.
	Prompt string `json:"prompt,omitempty"`
	Model  string `json:"model,omitempty"`
	// Timeout is in seconds; 0 is DefaultTimeout.
	Timeout int `json:"timeout"`
}

// skippedTypes are the hook types of Claude Code's format that ask does
// not run: a model answers them there, which ask cannot do for a hook.
var skippedTypes = []string{"prompt", "agent"}

// claudeTool is Claude Code's name for one of ask's built-in tools, and
// Claude Code's names for those of its arguments that differ from ask's.
type claudeTool struct {
	name string
	args map[string]string
}

// claudeTools map ask's built-ins to Claude Code's (DESIGN §5): a matcher
// may use either name, and a hook reads Claude Code's.
var claudeTools = map[string]claudeTool{
	"shell":          {"Bash", nil},
	"read_file":      {"Read", map[string]string{"path": "file_path"}},
	"write_file":     {"Write", map[string]string{"path": "file_path"}},
	"edit_file":      {"Edit", map[string]string{"path": "file_path", "old_text": "old_string", "new_text": "new_string"}},
	"search":         {"Grep", nil},
	"list_directory": {"LS", nil},
}

// mcpPrefix starts Claude Code's names for MCP tools: mcp__SERVER__TOOL,
// where ask declares SERVER__TOOL.
const mcpPrefix = "mcp__"

// Check says what is wrong with the config: the event whose list holds
// the fault ("" for none) and what, in the words of a config file's error.
func (c Config) Check() (event, msg string) {
	for _, event := range sortedKeys(c) {
		if !slices.Contains(Events, event) {
			return event, "unknown hook event: choose " + strings.Join(Events, ", ")
		}
		for i, g := range c[event] {
			if _, err := compile(g.Matcher); err != nil {
				return event, fmt.Sprintf("[%d].matcher: %v", i, err)
			}
			if len(g.Hooks) == 0 {
				return event, fmt.Sprintf(`[%d].hooks: is empty: give at least one {"type": "command", "command": "..."}`, i)
			}
			for j, h := range g.Hooks {
				at := fmt.Sprintf("[%d].hooks[%d]", i, j)
				switch {
				case slices.Contains(skippedTypes, h.Type):
					continue // Skipped says so
				case h.Type != "command":
					return event, fmt.Sprintf(`%s.type: %q: ask runs hooks of type "command" (and skips %s hooks)`, at, h.Type, quoteAll(skippedTypes))
				case strings.TrimSpace(h.Command) == "":
					return event, at + ".command: is empty: name the program to run"
				case h.Timeout < 0:
					return event, at + ".timeout: must be a number of seconds, 0 or more"
				}
			}
		}
	}
	return "", ""
}

// Skipped says, one line each, which hooks of the config ask will not
// run: Claude Code's types that ask does not have. A run warns of them.
func (c Config) Skipped() []string {
	var out []string
	for _, event := range sortedKeys(c) {
		for i, g := range c[event] {
			for j, h := range g.Hooks {
				if slices.Contains(skippedTypes, h.Type) {
					out = append(out, fmt.Sprintf("hooks.%s[%d].hooks[%d]: ask does not run %q hooks; skipped", event, i, j, h.Type))
				}
			}
		}
	}
	return out
}

func quoteAll(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, " and ")
}

// compile reads a matcher. Claude Code matches a plain name exactly and
// reads the rest as a regular expression, so the expression is anchored.
func compile(matcher string) (*regexp.Regexp, error) {
	if matcher == "" || matcher == "*" {
		return nil, nil
	}
	re, err := regexp.Compile("^(?:" + matcher + ")$")
	if err != nil {
		return nil, fmt.Errorf("%q is not a regular expression: %w", matcher, err)
	}
	return re, nil
}

// matches reports whether a group applies to a tool, by any of its names:
// ask's or Claude Code's.
func (g Group) matches(names ...string) bool {
	re, err := compile(g.Matcher)
	switch {
	case err != nil:
		return false // Check refused it already
	case re == nil || len(names) == 0 || names[0] == "":
		return true
	}
	return slices.ContainsFunc(names, re.MatchString)
}

// AskName is ask's name for the built-in tool Claude Code calls name
// (Bash, any case: shell), "" for a name that is none of them.
func AskName(name string) string {
	for ask, t := range claudeTools {
		if strings.EqualFold(t.name, name) {
			return ask
		}
	}
	return ""
}

// ClaudeName is Claude Code's name for a tool ask calls name: Bash for
// shell, mcp__SERVER__TOOL for the MCP tool SERVER__TOOL, else name.
func (r *Runner) ClaudeName(name string) string {
	if t, ok := claudeTools[name]; ok {
		return t.name
	}
	if r.IsMCP != nil && r.IsMCP(name) {
		return mcpPrefix + name
	}
	return name
}

// Record is one hook's decision, for the run's `hook` event.
type Record struct {
	Event, Command, Decision, Reason string
	// Tool and ToolUseID name the call of a tool event.
	Tool, ToolUseID string
}

// Runner runs the hooks of one run.
type Runner struct {
	Config Config
	// Dir is the working directory the hooks run in and cwd says.
	Dir string
	// Env is the hooks' environment: the tools' child environment, with
	// no keys.
	Env []string
	// SessionID and TranscriptPath go to every hook as Claude Code's
	// session_id and transcript_path.
	SessionID, TranscriptPath string
	// PermissionMode is Claude Code's name for how calls are approved:
	// "default", "plan" or "bypassPermissions" (--yes).
	PermissionMode string
	// IsMCP reports whether a tool is an MCP server's, which Claude Code
	// names mcp__SERVER__TOOL; nil: none is.
	IsMCP func(tool string) bool
	// OnRecord is told every hook's decision; nil drops them.
	OnRecord func(Record)
	// OnStop is told when a hook answers "continue": false, with its
	// stopReason: the run ends (status hook_stopped). Nil ignores it.
	OnStop func(event, reason string)
}

// Has reports whether any hook is named for event.
func (r *Runner) Has(event string) bool { return r != nil && len(r.Config[event]) > 0 }

// Verdict is what the hooks of one event decided together.
type Verdict struct {
	// Decision is Allow, Deny, Ask, Defer, Block or None: a deny (or
	// block) wins over a defer, a defer over an ask, an ask over an allow.
	Decision string
	// Reason is the deciding hook's, one line, naming it.
	Reason string
	// Context is what SessionStart and UserPromptSubmit hooks add to the
	// prompt (their plain stdout, or additionalContext).
	Context string
	// Stop: a hook answered "continue": false; StopReason is its
	// stopReason. The run ends, whatever the decision.
	Stop       bool
	StopReason string
}

// rank orders decisions: a deny or block wins; a failure that cannot deny
// (Error) only beats silence.
var rank = map[string]int{None: 0, Error: 1, Allow: 2, Ask: 3, Defer: 4, Deny: 5, Block: 5}

// Input is the event's own fields of the JSON a hook reads.
type Input struct {
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolResponse any             `json:"tool_response,omitempty"`
	Prompt       string          `json:"prompt,omitempty"`
	// StopHookActive: the model is answering again because a Stop hook
	// sent it back (a hook checks it to avoid sending it back forever).
	StopHookActive *bool  `json:"stop_hook_active,omitempty"`
	Source         string `json:"source,omitempty"` // SessionStart
	EndReason      string `json:"reason,omitempty"` // SessionEnd
	// Trigger is PreCompact's and PostCompact's: "auto" for a run's own
	// compaction. CustomInstructions is PreCompact's (none from ask),
	// CompactSummary PostCompact's.
	Trigger            string  `json:"trigger,omitempty"`
	CustomInstructions *string `json:"custom_instructions,omitempty"`
	CompactSummary     string  `json:"compact_summary,omitempty"`
	// SubagentStop: the child run's id and its definition's name.
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
}

// Run runs the hooks of event that apply to in.ToolName, one after
// another, and combines their decisions; each is recorded. Without hooks
// the verdict is None.
func (r *Runner) Run(ctx context.Context, event string, in Input) Verdict {
	v := Verdict{Decision: None}
	if !r.Has(event) {
		return v
	}
	payload, err := r.payload(event, in)
	if err != nil {
		return r.record(event, "", in, Verdict{Decision: failDecision(event), Reason: "hook input: " + err.Error()}, v)
	}
	for _, g := range r.Config[event] {
		if isToolEvent(event) && !g.matches(in.ToolName, r.ClaudeName(in.ToolName)) || isCompactEvent(event) && !g.matches(in.Trigger) {
			continue
		}
		for _, h := range g.Hooks {
			if h.Type != "command" {
				continue // a type ask does not run: warned of at start
			}
			one := r.runOne(ctx, event, h, payload)
			v = r.record(event, h.Command, in, one, v)
		}
	}
	if v.Stop && r.OnStop != nil {
		r.OnStop(event, v.StopReason)
	}
	return v
}

// record emits one hook's decision and folds it into the verdict so far.
func (r *Runner) record(event, command string, in Input, one, v Verdict) Verdict {
	if r.OnRecord != nil {
		r.OnRecord(Record{Event: event, Command: command, Decision: one.Decision, Reason: one.Reason, Tool: in.ToolName, ToolUseID: in.ToolUseID})
	}
	if one.Context != "" {
		v.Context = strings.TrimLeft(v.Context+"\n"+one.Context, "\n")
	}
	if rank[one.Decision] > rank[v.Decision] {
		v.Decision, v.Reason = one.Decision, one.Reason
	}
	if one.Stop && !v.Stop {
		v.Stop, v.StopReason = true, one.StopReason
	}
	return v
}

func isToolEvent(event string) bool { return event == PreToolUse || event == PostToolUse }

func isCompactEvent(event string) bool { return event == PreCompact || event == PostCompact }

// failDecision is what a hook that fails decides: a guard before a call
// or a prompt denies; after the fact, the failure is told (PostToolUse)
// or only recorded (Stop, SessionStart, SessionEnd).
func failDecision(event string) string {
	switch event {
	case PreToolUse:
		return Deny
	case UserPromptSubmit, PostToolUse:
		return Block
	}
	return Error
}

func (r *Runner) payload(event string, in Input) ([]byte, error) {
	common := map[string]any{
		"session_id":      r.SessionID,
		"transcript_path": r.TranscriptPath,
		"cwd":             r.Dir,
		"hook_event_name": event,
		"permission_mode": cmp.Or(r.PermissionMode, "default"),
	}
	own, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := json.Unmarshal(own, &fields); err != nil {
		return nil, err
	}
	for k, v := range fields {
		common[k] = v
	}
	if in.ToolName != "" {
		common["tool_name"] = r.ClaudeName(in.ToolName)
		common["ask_tool_name"] = in.ToolName
		common["tool_input"] = r.claudeInput(in.ToolName, in.ToolInput)
	}
	return json.Marshal(common)
}

// claudeInput is a call's arguments with Claude Code's names added beside
// ask's: file_path (absolute, as Claude Code gives it) for path,
// old_string and new_string for an edit's old_text and new_text, and
// Bash's timeout in milliseconds. Arguments that are no JSON object go as
// they are.
func (r *Runner) claudeInput(tool string, raw json.RawMessage) any {
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil || args == nil {
		return raw
	}
	for askName, claudeName := range claudeTools[tool].args {
		v, ok := args[askName]
		if !ok {
			continue
		}
		if p, isString := v.(string); isString && claudeName == "file_path" && !filepath.IsAbs(p) && r.Dir != "" {
			v = filepath.Join(r.Dir, p)
		}
		if _, taken := args[claudeName]; !taken {
			args[claudeName] = v
		}
	}
	if secs, ok := args["timeout_seconds"].(float64); ok && tool == "shell" {
		args["timeout"] = secs * 1000
	}
	return args
}

// maxOutput bounds what is kept of a hook's stdout and stderr.
const maxOutput = 64 << 10

// runOne runs one hook and reads its answer.
func (r *Runner) runOne(ctx context.Context, event string, h Command, payload []byte) Verdict {
	name := oneLine(h.Command, 60)
	fail := func(format string, args ...any) Verdict {
		return Verdict{Decision: failDecision(event), Reason: fmt.Sprintf("%s hook %q ", event, name) + fmt.Sprintf(format, args...)}
	}
	timeout := DefaultTimeout
	if h.Timeout > 0 {
		timeout = time.Duration(h.Timeout) * time.Second
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(hctx, "/bin/sh", "-c", h.Command)
	cmd.Dir = r.Dir
	// Claude Code's own variable, which hook scripts use to find the
	// project.
	cmd.Env = append(slices.Clone(r.Env), "CLAUDE_PROJECT_DIR="+r.Dir)
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bounded
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Its own process group, killed whole at the timeout: a hook's
	// children must not hold the pipes open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case hctx.Err() != nil && ctx.Err() == nil:
		return fail("timed out after %s", timeout)
	case ctx.Err() != nil:
		return fail("was stopped: %v", context.Cause(ctx))
	}
	var exitErr *exec.ExitError
	code := 0
	if err != nil {
		if !errors.As(err, &exitErr) {
			return fail("could not run: %v", err)
		}
		code = exitErr.ExitCode()
	}
	switch code {
	case 0:
		return r.answer(event, name, stdout.String(), fail)
	case 2:
		// Blocking: stderr is the reason the model is given.
		reason := oneLine(stderr.String(), 500)
		if reason == "" {
			reason = fmt.Sprintf("blocked by the %s hook %q (exit 2)", event, name)
		}
		return Verdict{Decision: blockDecision(event), Reason: reason}
	}
	msg := oneLine(stderr.String(), 200)
	if msg != "" {
		msg = ": " + msg
	}
	return fail("failed (exit %d)%s", code, msg)
}

// blockDecision is what blocking means for an event.
func blockDecision(event string) string {
	if event == PreToolUse {
		return Deny
	}
	return Block
}

// output is the JSON a hook may print on stdout (Claude Code's fields).
type output struct {
	Continue   *bool  `json:"continue"`
	StopReason string `json:"stopReason"`
	// Decision is PreToolUse's older "approve"/"block", and "block" for
	// PostToolUse, Stop and UserPromptSubmit.
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Specific *struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// answer reads the stdout of a hook that exited 0: nothing, plain text (a
// context for SessionStart and UserPromptSubmit, else ignored, as Claude
// Code does), or a JSON answer.
func (r *Runner) answer(event, name, stdout string, fail func(string, ...any) Verdict) Verdict {
	text := strings.TrimSpace(stdout)
	if text == "" {
		return Verdict{Decision: None}
	}
	if !strings.HasPrefix(text, "{") {
		if event == SessionStart || event == UserPromptSubmit {
			return Verdict{Decision: None, Context: text}
		}
		return Verdict{Decision: None}
	}
	var out output
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&out); err != nil || dec.More() {
		return fail("answered JSON that cannot be read: %s", oneLine(text, 80))
	}
	v := Verdict{Decision: None}
	if out.Specific != nil {
		if e := out.Specific.HookEventName; e != "" && e != event {
			return fail("answered for %q, not %s", e, event)
		}
		v.Context = out.Specific.AdditionalContext
	}
	reason := oneLine(out.Reason, 500)
	switch {
	case event == PreToolUse && out.Specific != nil && out.Specific.PermissionDecision != "":
		switch d := out.Specific.PermissionDecision; d {
		case Allow, Deny, Ask, Defer:
			v.Decision, reason = d, oneLine(out.Specific.PermissionDecisionReason, 500)
		default:
			return fail("answered permissionDecision %q: want allow, deny, ask or defer", d)
		}
	case out.Decision == "":
	case event == PreToolUse && out.Decision == "approve":
		v.Decision = Allow
	case out.Decision == Block:
		v.Decision = blockDecision(event)
	default:
		return fail("answered decision %q: want %s", out.Decision, map[bool]string{true: `"approve" or "block"`, false: `"block"`}[event == PreToolUse])
	}
	if out.Continue != nil && !*out.Continue {
		// "continue": false ends the run, and stops what the hook guards.
		v.Stop, v.StopReason = true, oneLine(out.StopReason, 500)
		if v.StopReason == "" {
			v.StopReason = fmt.Sprintf("the %s hook %q answered \"continue\": false", event, name)
		}
		if event == PreToolUse || event == UserPromptSubmit || event == PostToolUse {
			v.Decision, reason = blockDecision(event), v.StopReason
		}
	}
	if (v.Decision == Deny || v.Decision == Block) && reason == "" {
		reason = fmt.Sprintf("blocked by the %s hook %q", event, name)
	}
	v.Reason = reason
	return v
}

// bounded keeps the first maxOutput bytes written to it.
type bounded struct{ bytes.Buffer }

func (b *bounded) Write(p []byte) (int, error) {
	if room := maxOutput - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

var _ io.Writer = (*bounded)(nil)

// oneLine folds text to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
