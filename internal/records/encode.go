package records

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/ask-cli/ask/internal/providers"
)

// MarshalJSON writes the event with the fields its type uses.
// tool.finished has content, is_error and duration_ms always present
// (DESIGN §6), even "", false and 0, and last; other events leave out what
// they do not use. Reading needs nothing of the kind: a transcript written
// before duration_ms existed reads as 0.
//
// It writes the bytes encoding/json would write for the event's fields
// (TestMarshalAsEncodingJSON holds the two to the same bytes), without
// asking encoding/json to build its encoder of Event: that takes about
// 0.2 ms of reflection over Event's fields and every type they hold, paid
// by every run at its first event, on its way to the first request. The
// settings, and what every run records (a request's headers and body, the
// usage, the history), are written here too; any other field that holds a
// struct, a slice or a map is encoded by encoding/json, when present.
func (ev Event) MarshalJSON() ([]byte, error) {
	w := objectWriter{b: make([]byte, 0, 256)}
	w.b = append(w.b, '{')
	w.str("type", ev.Type, false)
	// Time.MarshalJSON's bytes, appended.
	w.key("time")
	w.b = append(w.b, '"')
	var err error
	if w.b, err = ev.Time.AppendText(w.b); err != nil {
		w.fail(err)
	}
	w.b = append(w.b, '"')
	w.int("step", int64(ev.Step), true)
	w.str("id", ev.ID, true)
	w.str("version", ev.Version, true)
	w.str("provider", ev.Provider, true)
	w.str("model", ev.Model, true)
	w.str("mode", ev.Mode, true)
	if ev.Settings != nil {
		// Its own encoder, not encoding/json's, which would check again
		// what it wrote (the system prompt and all).
		if b, err := ev.Settings.MarshalJSON(); err != nil {
			w.fail(err)
		} else {
			w.raw("settings", b)
		}
	}
	w.str("parent_id", ev.ParentID, true)
	if ev.Git != nil {
		w.value("git", ev.Git)
	}
	w.str("url", ev.URL, true)
	w.int("http_status", int64(ev.HTTPStatus), true)
	if len(ev.Headers) > 0 {
		w.stringMap("headers", ev.Headers)
	}
	if len(ev.Body) > 0 {
		w.rawJSON("body", ev.Body)
	}
	w.str("text", ev.Text, true)
	w.str("reasoning", ev.Reasoning, true)
	if len(ev.ToolCalls) > 0 {
		w.value("tool_calls", ev.ToolCalls)
	}
	if ev.Usage != nil {
		w.key("usage")
		w.usage(*ev.Usage, nil)
	}
	w.str("name", ev.Name, true)
	w.str("arguments", ev.Arguments, true)
	finished := ev.Type == TypeToolFinished
	if !finished {
		w.str("content", ev.Content, true)
		w.bool("is_error", ev.IsError, true)
		w.int("duration_ms", ev.DurationMS, true)
	}
	w.str("reason", ev.Reason, true)
	// The embedded structs' fields, in their place, as encoding/json
	// promotes them; none shares a name with another field.
	if ev.Change != nil {
		w.members(ev.Change)
	}
	if ev.Contents != nil {
		w.members(ev.Contents)
	}
	if ev.Compaction != nil {
		w.members(ev.Compaction)
	}
	w.str("event", ev.HookEvent, true)
	w.str("command", ev.Command, true)
	w.str("decision", ev.Decision, true)
	w.int("round", int64(ev.Round), true)
	if ev.Passed != nil {
		w.bool("passed", *ev.Passed, false)
	}
	if ev.CheckExit != nil {
		w.key("check_exit_code")
		w.b = strconv.AppendInt(w.b, int64(*ev.CheckExit), 10)
	}
	if len(ev.AllowedTools) > 0 {
		w.value("allowed_tools", ev.AllowedTools)
	}
	w.str("host", ev.Host, true)
	w.int("port", int64(ev.Port), true)
	if ev.Allowed != nil {
		w.bool("allowed", *ev.Allowed, false)
	}
	w.int("attempt", int64(ev.Attempt), true)
	w.int("delay_ms", ev.DelayMS, true)
	w.str("error", ev.Error, true)
	w.str("status", ev.Status, true)
	if ev.Answer != nil {
		w.str("answer", *ev.Answer, false)
	}
	w.int("steps", int64(ev.Steps), true)
	w.int("tool_call_count", int64(ev.ToolCount), true)
	if len(ev.Denials) > 0 {
		w.value("denials", ev.Denials)
	}
	if len(ev.Changes) > 0 {
		w.value("changes", ev.Changes)
	}
	w.int("exit_code", int64(ev.ExitCode), true)
	if ev.Cost != nil {
		w.float("cost", *ev.Cost)
	}
	w.str("tier", ev.Tier, true)
	if ev.PriceRate != nil {
		w.float("price_rate", *ev.PriceRate)
	}
	if len(ev.UsagePerStep) > 0 {
		w.key("usage_per_step")
		appendList(&w, ev.UsagePerStep, func(u StepUsage) { w.usage(u.Usage, &u.Step) })
	}
	if len(ev.SkillsUsed) > 0 {
		w.strings("skills_used", ev.SkillsUsed)
	}
	if len(ev.Children) > 0 {
		w.value("children", ev.Children)
	}
	if len(ev.History) > 0 {
		w.rawList("history", ev.History)
	}
	if len(ev.Deferred) > 0 {
		w.value("deferred", ev.Deferred)
	}
	if ev.Paused != nil {
		w.value("paused", ev.Paused)
	}
	if ev.Worktree != nil {
		w.value("worktree", ev.Worktree)
	}
	if finished {
		w.str("content", ev.Content, false)
		w.bool("is_error", ev.IsError, false)
		w.key("duration_ms")
		w.b = strconv.AppendInt(w.b, ev.DurationMS, 10)
	}
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '}'), nil
}

// MarshalJSON writes the settings as encoding/json would
// (TestSettingsAsEncodingJSON), without building its encoder of Settings
// and of the types it holds, which every run's run.started otherwise
// pays for on its way to the first request (about 0.1 ms).
func (s Settings) MarshalJSON() ([]byte, error) {
	w := objectWriter{b: make([]byte, 0, 256+len(s.System))}
	w.b = append(w.b, '{')
	w.str("prompt", s.Prompt, false)
	if len(s.Attachments) > 0 {
		w.value("attachments", s.Attachments)
	}
	w.str("system", s.System, false)
	w.str("project_file", s.ProjectFile, true)
	w.str("base_url", s.BaseURL, true)
	w.str("workdir", s.Workdir, true)
	w.int("max_steps", int64(s.MaxSteps), false)
	w.str("timeout", s.Timeout, false)
	w.bool("stream", s.Stream, false)
	w.strings("tools", s.Tools)
	w.str("tool_protocol", s.ToolProtocol, true)
	w.bool("safe", s.Safe, true)
	w.str("tools_file", s.ToolsFile, true)
	if len(s.MCP) > 0 {
		w.value("mcp", s.MCP)
	}
	if len(s.UserTools) > 0 {
		w.value("user_tools", s.UserTools)
	}
	w.int("max_tokens", int64(s.MaxTokens), true)
	if s.Temperature != nil {
		w.float("temperature", *s.Temperature)
	}
	w.str("reasoning", s.Reasoning, true)
	w.str("tier", s.Tier, true)
	w.bool("no_cache", s.NoCache, true)
	if len(s.Schema) > 0 {
		w.rawJSON("schema", s.Schema)
	}
	if len(s.History) > 0 {
		w.rawList("history", s.History)
	}
	w.int("context_window", int64(s.ContextWindow), true)
	w.int("compact_at", int64(s.CompactAt), true)
	w.str("compact", s.Compact, true)
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '}'), nil
}

// objectWriter writes a JSON object's members as encoding/json writes a
// struct's, HTML characters unescaped (as providers.MarshalNoEscape). The
// first error is kept, and ends the writing.
type objectWriter struct {
	b   []byte
	err error
	// enc writes the members encoding/json encodes to buf, one at a
	// time: one encoder and one buffer an object.
	enc *json.Encoder
	buf bytes.Buffer
}

func (w *objectWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// key starts a member; every key here is plain ASCII.
func (w *objectWriter) key(k string) {
	if len(w.b) > 1 {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *objectWriter) raw(k string, v []byte) {
	w.key(k)
	w.b = append(w.b, v...)
}

// str writes a string member, none when omitEmpty and it is "".
func (w *objectWriter) str(k, v string, omitEmpty bool) {
	if omitEmpty && v == "" {
		return
	}
	w.key(k)
	w.b = providers.AppendQuote(w.b, v)
}

// int writes a number member, none when omitEmpty and it is 0.
func (w *objectWriter) int(k string, v int64, omitEmpty bool) {
	if omitEmpty && v == 0 {
		return
	}
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *objectWriter) bool(k string, v, omitEmpty bool) {
	if omitEmpty && !v {
		return
	}
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

// rawJSON writes a member that holds a JSON document, compacted, as
// encoding/json writes a json.RawMessage.
func (w *objectWriter) rawJSON(k string, m json.RawMessage) {
	w.key(k)
	w.appendRaw(m)
}

func (w *objectWriter) appendRaw(m json.RawMessage) {
	if m == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.buf.Reset()
	if err := json.Compact(&w.buf, m); err != nil {
		w.fail(err)
		return
	}
	w.b = append(w.b, w.buf.Bytes()...)
}

// rawList writes a member that holds a list of JSON documents.
func (w *objectWriter) rawList(k string, list []json.RawMessage) {
	w.key(k)
	appendList(w, list, w.appendRaw)
}

// strings writes a member that holds a list of strings, null when nil.
func (w *objectWriter) strings(k string, list []string) {
	w.key(k)
	appendList(w, list, func(s string) { w.b = providers.AppendQuote(w.b, s) })
}

// appendList writes list as a JSON array, each element by item; null when
// list is nil, as encoding/json writes a nil slice.
func appendList[T any](w *objectWriter, list []T, item func(T)) {
	if list == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i, v := range list {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		item(v)
	}
	w.b = append(w.b, ']')
}

// stringMap writes a member that holds an object of strings, its keys
// sorted as encoding/json sorts a map's.
func (w *objectWriter) stringMap(k string, m map[string]string) {
	w.key(k)
	if m == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '{')
	for i, name := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = providers.AppendQuote(w.b, name)
		w.b = append(w.b, ':')
		w.b = providers.AppendQuote(w.b, m[name])
	}
	w.b = append(w.b, '}')
}

// float writes a number member as encoding/json writes a float64: the
// shortest decimal that reads back as it, with an exponent below 1e-6 and
// from 1e21 on, the exponent without a leading zero. NaN and the
// infinities go to encoding/json, for its error.
func (w *objectWriter) float(k string, f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.value(k, f)
		return
	}
	w.key(k)
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if n := len(w.b); format == 'e' && n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
		w.b[n-2] = w.b[n-1] // e-07 is e-7
		w.b = w.b[:n-1]
	}
}

// usage writes a usage object (a StepUsage's when step is not nil) as
// encoding/json writes providers.Usage: its fields in their order.
func (w *objectWriter) usage(u providers.Usage, step *int) {
	o := objectWriter{b: append(make([]byte, 0, 160), '{')}
	if step != nil {
		o.int("step", int64(*step), false)
	}
	o.int("input_tokens", int64(u.InputTokens), false)
	o.int("output_tokens", int64(u.OutputTokens), false)
	o.int("cache_read_tokens", int64(u.CacheReadTokens), false)
	o.int("cache_write_tokens", int64(u.CacheWriteTokens), false)
	o.int("reasoning_tokens", int64(u.ReasoningTokens), true)
	o.int("total_tokens", int64(u.TotalTokens), false)
	if u.Cost != nil {
		o.float("cost", *u.Cost)
	}
	if o.err != nil {
		w.fail(o.err)
		return
	}
	w.b = append(append(w.b, o.b...), '}')
}

// encode is v as encoding/json writes it, HTML characters unescaped; nil
// after an error.
func (w *objectWriter) encode(v any) []byte {
	if w.err != nil {
		return nil
	}
	if w.enc == nil {
		w.enc = json.NewEncoder(&w.buf)
		w.enc.SetEscapeHTML(false)
	}
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil {
		w.fail(err)
		return nil
	}
	return bytes.TrimSuffix(w.buf.Bytes(), []byte("\n"))
}

// value writes a member that encoding/json encodes.
func (w *objectWriter) value(k string, v any) {
	if b := w.encode(v); b != nil {
		w.raw(k, b)
	}
}

// members writes the members of the object encoding/json makes of v, a
// struct embedded in the event.
func (w *objectWriter) members(v any) {
	b := w.encode(v)
	if b == nil {
		return
	}
	inner := bytes.TrimSpace(b)
	inner = inner[1 : len(inner)-1] // within the braces
	if len(inner) == 0 {
		return
	}
	if len(w.b) > 1 {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, inner...)
}
