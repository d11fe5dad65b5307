// Package records defines the events of a run and writes them as JSONL: the
// transcript file and the live --events stream share one schema (DESIGN §6),
// and `ask replay` reads transcripts back.
package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ask-cli/ask/internal/providers"
)

// Event types, in the order a run emits them.
const (
	TypeRunStarted   = "run.started"
	TypeRequest      = "request"
	TypeResponse     = "response"
	TypeRetry        = "retry"
	TypeAssistant    = "assistant"
	TypeToolStarted  = "tool.started"
	TypeToolFinished = "tool.finished"
	TypeToolDenied   = "tool.denied"
	// TypeToolDeferred is a call left for `ask resume` (DESIGN §9).
	TypeToolDeferred = "tool.deferred"
	TypeFileChanged  = "file.changed"
	// TypeHook is one hook's decision (DESIGN §5, Hooks).
	TypeHook = "hook"
	// TypeCheckFinished is one run of --until's check.
	TypeCheckFinished = "check.finished"
	// TypeSkillActivated is a skill's instructions given to the model
	// (DESIGN §9, Skills): by the skill tool, or by --skill.
	TypeSkillActivated = "skill.activated"
	// TypeNetwork is a connection through the sandbox's proxy.
	TypeNetwork = "network"
	// TypeContextCompacted is one compaction of the conversation
	// (DESIGN §9, Long runs).
	TypeContextCompacted = "context.compacted"
	TypeError            = "error"
	TypeRunFinished      = "run.finished"
)

// Event is one line of a transcript. Fields not used by an event's type are
// left out of its JSON.
type Event struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	Step int       `json:"step,omitempty"`
	// ID is a tool call's (tool.started, tool.finished, tool.denied), or
	// the run's (run.started, run.finished: its kept transcript's name).
	ID string `json:"id,omitempty"`

	// run.started
	Version  string    `json:"version,omitempty"`
	Provider string    `json:"provider,omitempty"`
	Model    string    `json:"model,omitempty"`
	Mode     string    `json:"mode,omitempty"`
	Settings *Settings `json:"settings,omitempty"`
	// ParentID is the run that started this one with its agent tool
	// (run.started).
	ParentID string `json:"parent_id,omitempty"`
	// Git is the working directory's repository as the run's first command
	// found it (run.finished; run.started in transcripts of earlier
	// versions).
	Git *GitState `json:"git,omitempty"`

	// request, response
	URL        string            `json:"url,omitempty"`
	HTTPStatus int               `json:"http_status,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	Body       json.RawMessage   `json:"body,omitempty"`

	// assistant; Reasoning is the model's thinking as the provider shows
	// it, for people only (the protocol's own copy is in the history).
	Text      string               `json:"text,omitempty"`
	Reasoning string               `json:"reasoning,omitempty"`
	ToolCalls []providers.ToolCall `json:"tool_calls,omitempty"`
	Usage     *providers.Usage     `json:"usage,omitempty"`

	// tool.started, tool.finished, tool.denied
	Name       string `json:"name,omitempty"`
	Arguments  string `json:"arguments,omitempty"`
	Content    string `json:"content,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"` // also run.finished's
	Reason     string `json:"reason,omitempty"`

	// file.changed: one file, as a change of run.finished's list, with
	// what undo and `ask log diff` need (Contents).
	*Change
	*Contents
	// context.compacted
	*Compaction

	// hook: the hook's event and command, and its decision (Reason says
	// why). check.finished: the command, its round, whether it passed and
	// its exit code (its output is Content).
	HookEvent string `json:"event,omitempty"`
	Command   string `json:"command,omitempty"`
	Decision  string `json:"decision,omitempty"`
	Round     int    `json:"round,omitempty"`
	Passed    *bool  `json:"passed,omitempty"`
	CheckExit *int   `json:"check_exit_code,omitempty"`

	// skill.activated: the skill's name is Name; AllowedTools narrow the
	// run while it is active.
	AllowedTools []string `json:"allowed_tools,omitempty"`

	// network: a connection through the sandbox's proxy (--allow-host).
	Host    string `json:"host,omitempty"`
	Port    int    `json:"port,omitempty"`
	Allowed *bool  `json:"allowed,omitempty"`

	// retry, error
	Attempt int    `json:"attempt,omitempty"`
	DelayMS int64  `json:"delay_ms,omitempty"`
	Error   string `json:"error,omitempty"`

	// run.finished
	Status    string   `json:"status,omitempty"`
	Answer    *string  `json:"answer,omitempty"`
	Steps     int      `json:"steps,omitempty"`
	ToolCount int      `json:"tool_call_count,omitempty"`
	Denials   []Denial `json:"denials,omitempty"`
	Changes   []Change `json:"changes,omitempty"`
	ExitCode  int      `json:"exit_code,omitempty"`
	// Cost is the run's cost: as the provider reported it, else its
	// tokens at the config file's prices and the run's price rate; left
	// out when neither is known.
	Cost *float64 `json:"cost,omitempty"`
	// Tier is how the requests were billed when not at the listed price
	// ("flex", "background", "batch"), and PriceRate the share of the
	// listed price that Cost was taken at.
	Tier      string   `json:"tier,omitempty"`
	PriceRate *float64 `json:"price_rate,omitempty"`
	// UsagePerStep is each model request's usage.
	UsagePerStep []StepUsage `json:"usage_per_step,omitempty"`
	// SkillsUsed are the skills activated, in order; Children the runs
	// the agent tool started (their usage and cost are in Usage and Cost).
	SkillsUsed []string `json:"skills_used,omitempty"`
	Children   []Child  `json:"children,omitempty"`
	// History is the whole conversation at the end, in the protocol's own
	// form: what `ask --continue` carries on from.
	History []json.RawMessage `json:"history,omitempty"`
	// Deferred are the calls a deferred run waits on, and Paused its
	// step, which `ask resume` carries on (DESIGN §9, Pauses).
	Deferred []Deferred `json:"deferred,omitempty"`
	Paused   *Paused    `json:"paused,omitempty"`
	// Worktree is the git worktree the run kept (--worktree), nil when it
	// had none or left it unchanged.
	Worktree *Worktree `json:"worktree,omitempty"`
}

// Worktree is a git worktree a run worked in and kept: where it is, its
// branch, and the commit it was made from.
type Worktree struct {
	Path   string `json:"path"`
	Branch string `json:"branch"`
	Base   string `json:"base"`
}

// Child is a run another run started with its agent tool: a kept run of
// its own (ask log show ID).
type Child struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Status string          `json:"status"`
	Usage  providers.Usage `json:"usage"`
	Cost   *float64        `json:"cost,omitempty"`
}

// Settings are what a run was asked to do; replay reads them back.
type Settings struct {
	Prompt string `json:"prompt"`
	// Attachments are the files sent with the prompt (-a), bytes and all,
	// so that a replay sends them again.
	Attachments []providers.Attachment `json:"attachments,omitempty"`
	System      string                 `json:"system"` // the full system prompt as sent
	// ProjectFile is the AGENTS.md the system prompt carries, if any.
	ProjectFile string   `json:"project_file,omitempty"`
	BaseURL     string   `json:"base_url,omitempty"`
	Workdir     string   `json:"workdir,omitempty"`
	MaxSteps    int      `json:"max_steps"`
	Timeout     string   `json:"timeout"`
	Stream      bool     `json:"stream"`
	Tools       []string `json:"tools"`
	// ToolProtocol is --tool-protocol as chosen: auto, native, json or
	// markdown.
	ToolProtocol string `json:"tool_protocol,omitempty"`
	// Safe is --safe.
	Safe bool `json:"safe,omitempty"`
	// ToolsFile is the --tools-file the run loaded, as an absolute path so
	// that a continued run finds it from any directory.
	ToolsFile string `json:"tools_file,omitempty"`
	// MCP are the --mcp commands whose servers the run started.
	MCP []string `json:"mcp,omitempty"`
	// UserTools are the declarations of the tools that do not come with
	// ask (the tools file's, the MCP servers'), as the model was offered
	// them: replay declares them from here when it cannot run them.
	UserTools []providers.Tool `json:"user_tools,omitempty"`
	MaxTokens int              `json:"max_tokens,omitempty"`
	// Temperature and Reasoning are --temperature and --reasoning, left
	// out when not given.
	Temperature *float64 `json:"temperature,omitempty"`
	Reasoning   string   `json:"reasoning,omitempty"`
	// Tier is --tier, left out when not given.
	Tier string `json:"tier,omitempty"`
	// NoCache is --no-cache: the requests asked for no caching.
	NoCache bool `json:"no_cache,omitempty"`
	// Schema is the JSON Schema the answer had to match (--schema).
	Schema json.RawMessage `json:"schema,omitempty"`
	// History is the earlier conversation the run continued from
	// (--continue, --resume), in the protocol's own form.
	History []json.RawMessage `json:"history,omitempty"`
	// ContextWindow is the model's window the run compacted under (from
	// --context-window or the provider's listing), CompactAt its
	// --compact-at and Compact its --compact: replay compacts alike.
	ContextWindow int    `json:"context_window,omitempty"`
	CompactAt     int    `json:"compact_at,omitempty"`
	Compact       string `json:"compact,omitempty"`
}

// Compaction is what one compaction of a run's conversation did, in
// context.compacted and in --json's compactions.
type Compaction struct {
	// Trigger is "auto" (the request would have crossed --compact-at) or
	// "overflow" (the provider answered that the context was too long).
	Trigger string `json:"trigger"`
	// Window is the model's input window the compaction aimed under, in
	// tokens.
	Window       int `json:"window"`
	BeforeTokens int `json:"before_tokens"`
	AfterTokens  int `json:"after_tokens"`
	// Pruned are the tool results replaced by one-line stubs; Summarised
	// the steps replaced by a summary.
	Pruned     int `json:"pruned"`
	Summarised int `json:"summarised"`
	// Cut are the last step's results cut to their head and tail because
	// that step alone would not fit the window (each says so where it
	// was cut).
	Cut int `json:"cut,omitempty"`
	// CacheRead are the summarising requests' input tokens the provider
	// read from its prompt cache; SummaryTokens what the summary cost in
	// output tokens.
	CacheRead     int `json:"cache_read"`
	SummaryTokens int `json:"summary_tokens,omitempty"`
	// Summary is the text that stands for the summarised steps.
	Summary string `json:"summary,omitempty"`
}

// StepUsage is the usage of one step's model request.
type StepUsage struct {
	Step int `json:"step"`
	providers.Usage
}

// Change is a file the run created, edited, overwrote or deleted. The
// line counts are there when the tool knows them (write_file, edit_file);
// a command's changes are seen from outside, without them.
type Change struct {
	Path   string `json:"path"`
	Action string `json:"action"` // created, edited, overwrote, deleted, changed
	Tool   string `json:"tool"`
	// LinesAdded and LinesRemoved are nil when not known.
	LinesAdded   *int `json:"lines_added,omitempty"`
	LinesRemoved *int `json:"lines_removed,omitempty"`
}

// String says what happened to the file, in a few words: "edited
// notes.txt (+1 -1)", "wrote Makefile (new, 12 lines)", "created out.o (by
// shell)". The path is as recorded: quote it for a terminal.
func (c Change) String() string {
	switch {
	case c.LinesAdded == nil || c.LinesRemoved == nil:
		return fmt.Sprintf("%s %s (by %s)", c.Action, c.Path, c.Tool)
	case c.Action == "created" && *c.LinesAdded == 1:
		return fmt.Sprintf("wrote %s (new, 1 line)", c.Path)
	case c.Action == "created":
		return fmt.Sprintf("wrote %s (new, %d lines)", c.Path, *c.LinesAdded)
	case c.Action == "overwrote":
		return fmt.Sprintf("wrote %s (+%d -%d)", c.Path, *c.LinesAdded, *c.LinesRemoved)
	}
	return fmt.Sprintf("%s %s (+%d -%d)", c.Action, c.Path, *c.LinesAdded, *c.LinesRemoved)
}

// Contents are a changed file's content before and after the change, each
// up to 1 MB: text as a string, anything else (not UTF-8) in base64. A
// command's changes have no before; a file larger than 1 MB has no
// content, but its hash after is there whatever its size.
type Contents struct {
	Before       *string `json:"before,omitempty"`
	BeforeBase64 []byte  `json:"before_base64,omitempty"`
	After        *string `json:"after,omitempty"`
	AfterBase64  []byte  `json:"after_base64,omitempty"`
	// AfterSHA256 is the SHA-256 of the file as the change left it, in
	// hex; "" when it was deleted.
	AfterSHA256 string `json:"after_sha256,omitempty"`
	// Omitted says why content that could have been recorded was not.
	Omitted string `json:"omitted,omitempty"`
}

// SetBefore records the content before the change.
func (c *Contents) SetBefore(b []byte) { c.Before, c.BeforeBase64 = encode(b) }

// SetAfter records the content after the change.
func (c *Contents) SetAfter(b []byte) { c.After, c.AfterBase64 = encode(b) }

// BeforeBytes returns the content before the change, and whether it was
// recorded.
func (c *Contents) BeforeBytes() ([]byte, bool) { return decode(c.Before, c.BeforeBase64) }

// AfterBytes returns the content after the change, and whether it was
// recorded.
func (c *Contents) AfterBytes() ([]byte, bool) { return decode(c.After, c.AfterBase64) }

func encode(b []byte) (*string, []byte) {
	if utf8.Valid(b) {
		s := string(b)
		return &s, nil
	}
	return nil, bytes.Clone(b)
}

func decode(s *string, b64 []byte) ([]byte, bool) {
	switch {
	case s != nil:
		return []byte(*s), true
	case b64 != nil:
		return b64, true
	}
	return nil, false
}

// GitState is what undo needs of the repository the run started in: the
// commit checked out, and which of the working directory's tracked files
// differed from it, so that a file a command changed can be restored from
// git only if it was clean.
type GitState struct {
	// Head is the commit checked out ("" before the first commit).
	Head string `json:"head"`
	// Prefix is the working directory's path in the repository, "" at
	// its top or ending in "/".
	Prefix string `json:"prefix"`
	// Dirty are the tracked files, relative to the working directory,
	// that differed from Head in the index or the working tree.
	Dirty []string `json:"dirty"`
}

// StatusDeferred is the run.finished status of a run that waits on
// deferred calls (loop.StatusDeferred).
const StatusDeferred = "deferred"

// Deferred is a call left for `ask resume`.
type Deferred struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Reason    string `json:"reason"`
}

// Paused is the step a deferred run stopped at: every call of it, each
// one's result in call order (a deferred call's only holds its place),
// and the indexes of the calls that wait. A transcript is a file anyone
// may edit: nothing here is a grant, and `ask resume` puts every waiting
// call to its own policy again.
type Paused struct {
	Calls    []providers.ToolCall   `json:"calls"`
	Results  []providers.ToolResult `json:"results"`
	Deferred []int                  `json:"deferred"`
}

// Check says what makes p unusable: a result that is not its call's, or
// a waiting index out of range or given twice.
func (p *Paused) Check() error {
	if len(p.Calls) == 0 || len(p.Results) != len(p.Calls) {
		return fmt.Errorf("its paused step has %d calls and %d results", len(p.Calls), len(p.Results))
	}
	for i, c := range p.Calls {
		if p.Results[i].ID != c.ID {
			return fmt.Errorf("its paused step's result %d answers %q, not the call %q", i, p.Results[i].ID, c.ID)
		}
	}
	if len(p.Deferred) == 0 {
		return fmt.Errorf("its paused step has no deferred call")
	}
	seen := map[int]bool{}
	for _, i := range p.Deferred {
		if i < 0 || i >= len(p.Calls) || seen[i] {
			return fmt.Errorf("its paused step names the deferred call %d, which is out of range or given twice", i)
		}
		seen[i] = true
	}
	return nil
}

// Denial is a call the policy refused.
type Denial struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Recorder writes events to any number of JSONL sinks. It is safe for
// concurrent use; each event is written whole, in one Write per sink, so a
// transcript holds every event up to a fault.
type Recorder struct {
	mu        sync.Mutex
	sinks     []io.Writer
	observers []func(Event)
	now       func() time.Time
	err       error
	redactor  *providers.Redactor
}

// Redact makes every line the recorder writes pass through red first, so
// that a secret a provider echoes (in a body, the model's text, a tool's
// arguments) reaches no sink, in whatever form the line spells it.
// Observers still see events as they are; what they write is theirs to
// redact.
func (r *Recorder) Redact(red *providers.Redactor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.redactor = red
}

// Observe calls fn with every event after it is written. Observers run under
// the recorder's lock, in emission order, and must not emit.
func (r *Recorder) Observe(fn func(Event)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observers = append(r.observers, fn)
}

// NewRecorder returns a recorder writing to sinks (nil ones are skipped).
func NewRecorder(sinks ...io.Writer) *Recorder {
	r := &Recorder{now: time.Now}
	for _, s := range sinks {
		if s != nil {
			r.sinks = append(r.sinks, s)
		}
	}
	return r
}

// Emit stamps ev with the time and writes it to every sink.
func (r *Recorder) Emit(ev Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Time.IsZero() {
		ev.Time = r.now().UTC()
	}
	line, err := Marshal(ev)
	if err != nil {
		r.err = err
		return
	}
	line = append(r.redactor.Redact(line), '\n')
	for _, s := range r.sinks {
		if _, err := s.Write(line); err != nil && r.err == nil {
			r.err = err
		}
	}
	for _, fn := range r.observers {
		fn(ev)
	}
}

// Err returns the first write error, if any.
func (r *Recorder) Err() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Marshal renders an event as one line of compact JSON, without escaping
// HTML characters in model text.
func Marshal(ev Event) ([]byte, error) { return ev.MarshalJSON() }

// BodyJSON stores an HTTP body in an event: a single JSON document as
// itself, anything else (an SSE or NDJSON stream, an HTML error page, a
// document nested too deeply for the event to be written) as a JSON
// string.
func BodyJSON(b []byte) json.RawMessage {
	t := bytes.TrimSpace(b)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') && providers.NestingDepth(t) <= providers.MaxNesting && json.Valid(t) {
		return append(json.RawMessage(nil), t...)
	}
	return providers.Quote(string(b))
}

// BodyBytes inverts BodyJSON.
func BodyBytes(raw json.RawMessage) []byte {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return []byte(s)
		}
	}
	return raw
}

// Headers flattens an HTTP header for an event, one value a name, in a
// stable order. Callers pass headers already redacted.
func Headers(h http.Header) map[string]string {
	if len(h) == 0 {
		return nil
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]string, len(h))
	for _, k := range keys {
		out[k] = h.Get(k)
	}
	return out
}
