package acp

import (
	"encoding/json"
	"path/filepath"
	"sync"

	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/tools"
)

// Tool kinds of ACP.
const (
	kindRead    = "read"
	kindEdit    = "edit"
	kindSearch  = "search"
	kindExecute = "execute"
	kindOther   = "other"
)

// toolKind is the ACP kind of a call of tool name whose risk is given.
func toolKind(name string, risk tools.Risk, known bool) string {
	switch {
	case name == "search":
		return kindSearch
	case name == policy.ShellTool:
		return kindExecute
	case !known:
		return kindOther
	case risk == tools.Read:
		return kindRead
	case risk == tools.Write:
		return kindEdit
	case risk == tools.Exec:
		return kindExecute
	}
	return kindOther
}

// fileTools are the tools whose path argument is a file or directory of
// the workdir: their calls carry locations.
var fileTools = map[string]bool{"read_file": true, "write_file": true, "edit_file": true, "list_directory": true, "search": true}

// updates turns a turn's events into session/update notifications.
type updates struct {
	s       *session
	workdir string
	info    func(name string) (tools.Info, bool)
	// replay: the events are a kept session's, read back for
	// session/load; only then is the user's prompt sent to the client.
	replay bool

	mu       sync.Mutex
	streamed bool             // the step's text went out as it came
	diffs    map[string][]any // diff blocks of a file tool, until its call finishes
}

func (u *updates) send(update map[string]any) {
	u.s.srv.conn.notify("session/update", map[string]any{"sessionId": u.s.id, "update": update})
}

func textBlock(text string) map[string]string { return map[string]string{"type": "text", "text": text} }

// text streams the answer as it comes.
func (u *updates) text(t string) {
	if t == "" {
		return
	}
	u.mu.Lock()
	u.streamed = true
	u.mu.Unlock()
	u.send(map[string]any{"sessionUpdate": "agent_message_chunk", "content": textBlock(t)})
}

// thought sends the model's thinking.
func (u *updates) thought(t string) {
	if t != "" {
		u.send(map[string]any{"sessionUpdate": "agent_thought_chunk", "content": textBlock(t)})
	}
}

// toolCall is the tool_call that announces a call, pending until the
// policy has decided it.
func (u *updates) toolCall(id, name, arguments string) map[string]any {
	info, known := u.info(name)
	tc := map[string]any{"sessionUpdate": "tool_call", "toolCallId": id, "title": title(name, arguments),
		"kind": toolKind(name, info.Risk, known), "status": "pending"}
	if raw := json.RawMessage(arguments); json.Valid(raw) {
		tc["rawInput"] = raw
	}
	if loc := u.location(name, arguments); loc != nil {
		tc["locations"] = []any{loc}
	}
	return tc
}

// title names a call for a person: the tool and its main argument.
func title(name, arguments string) string { return titled(name, policy.Summary(arguments)) }

func titled(name, summary string) string {
	if summary != "" {
		return name + ": " + summary
	}
	return name
}

func (u *updates) location(name, arguments string) map[string]any {
	if !fileTools[name] {
		return nil
	}
	var a struct {
		Path string `json:"path"`
	}
	json.Unmarshal([]byte(arguments), &a)
	if a.Path == "" {
		a.Path = "."
	}
	p := a.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(u.workdir, p)
	}
	return map[string]any{"path": p}
}

// observe maps one event of the run to the updates it makes.
func (u *updates) observe(ev records.Event) {
	switch ev.Type {
	case records.TypeRunStarted:
		if ev.Settings != nil && u.replay {
			u.send(map[string]any{"sessionUpdate": "user_message_chunk", "content": textBlock(ev.Settings.Prompt)})
		}
	case records.TypeAssistant:
		u.mu.Lock()
		streamed := u.streamed
		u.streamed = false
		u.mu.Unlock()
		if ev.Reasoning != "" && u.replay {
			u.thought(ev.Reasoning)
		}
		if ev.Text != "" && !streamed {
			u.send(map[string]any{"sessionUpdate": "agent_message_chunk", "content": textBlock(ev.Text)})
		}
		for _, c := range ev.ToolCalls {
			u.send(u.toolCall(c.ID, c.Name, c.Arguments))
		}
	case records.TypeToolStarted:
		u.send(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": ev.ID, "status": "in_progress"})
	case records.TypeFileChanged:
		if ev.Change == nil || ev.Contents == nil || ev.After == nil {
			return
		}
		path := ev.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(u.workdir, path)
		}
		diff := map[string]any{"type": "diff", "path": path, "newText": *ev.After}
		if ev.Before != nil {
			diff["oldText"] = *ev.Before
		}
		u.mu.Lock()
		if u.diffs == nil {
			u.diffs = map[string][]any{}
		}
		u.diffs[ev.Tool] = append(u.diffs[ev.Tool], diff)
		u.mu.Unlock()
	case records.TypeToolFinished:
		status := "completed"
		if ev.IsError {
			status = "failed"
		}
		content := []any{}
		u.mu.Lock()
		content = append(content, u.diffs[ev.Name]...)
		delete(u.diffs, ev.Name)
		u.mu.Unlock()
		if ev.Content != "" {
			content = append(content, map[string]any{"type": "content", "content": textBlock(ev.Content)})
		}
		u.send(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": ev.ID, "status": status, "content": content})
	case records.TypeToolDenied:
		u.send(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": ev.ID, "status": "failed",
			"content": []any{map[string]any{"type": "content", "content": textBlock("not run: " + ev.Reason)}}})
	}
}
