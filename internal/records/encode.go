package records

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// appendEvent writes ev as one JSON object, field by field: a run writes
// only a handful of events, and encoding/json built its encoders for Event,
// Settings and the provider types on first use in every run (field lists,
// sorting, reflection), about 5.5 % of a one-shot run. The bytes are those
// of encoding/json with SetEscapeHTML(false) for the same struct tags: the
// fields in declaration order, the same omitempty rules; FuzzEventJSON and
// TestEncodeEveryField hold the two together. tool.finished writes
// content, is_error and duration_ms always, and last, where encoding/json
// put them as the outer fields of the struct it was written through.
func appendEvent(b []byte, ev *Event) ([]byte, error) {
	var err error
	b = append(b, `{"type":`...)
	b = appendString(b, ev.Type)
	b = append(b, `,"time":`...)
	if b, err = appendTime(b, ev); err != nil {
		return nil, err
	}
	b = appendIntField(b, "step", int64(ev.Step))

	b = appendStringField(b, "version", ev.Version)
	b = appendStringField(b, "provider", ev.Provider)
	b = appendStringField(b, "model", ev.Model)
	b = appendStringField(b, "mode", ev.Mode)
	if ev.Settings != nil {
		b = append(b, `,"settings":`...)
		if b, err = appendSettings(b, ev.Settings); err != nil {
			return nil, err
		}
	}

	b = appendStringField(b, "url", ev.URL)
	b = appendIntField(b, "http_status", int64(ev.HTTPStatus))
	if len(ev.Headers) > 0 {
		b = append(b, `,"headers":`...)
		b = appendStringMap(b, ev.Headers)
	}
	if b, err = appendRawField(b, "body", ev.Body); err != nil {
		return nil, err
	}

	b = appendStringField(b, "text", ev.Text)
	if len(ev.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range ev.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendToolCall(b, c)
		}
		b = append(b, ']')
	}
	if ev.Usage != nil {
		b = append(b, `,"usage":{`...)
		if b, err = appendUsageFields(b, ev.Usage); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}

	finished := ev.Type == TypeToolFinished
	b = appendStringField(b, "id", ev.ID)
	b = appendStringField(b, "name", ev.Name)
	b = appendStringField(b, "arguments", ev.Arguments)
	if !finished {
		b = appendStringField(b, "content", ev.Content)
		if ev.IsError {
			b = append(b, `,"is_error":true`...)
		}
		b = appendIntField(b, "duration_ms", ev.DurationMS)
	}
	b = appendStringField(b, "reason", ev.Reason)

	if ev.Change != nil {
		b = append(b, ',')
		b = appendChangeFields(b, ev.Change)
	}

	b = appendIntField(b, "attempt", int64(ev.Attempt))
	b = appendIntField(b, "delay_ms", ev.DelayMS)
	b = appendStringField(b, "error", ev.Error)

	b = appendStringField(b, "status", ev.Status)
	if ev.Answer != nil {
		b = append(b, `,"answer":`...)
		b = appendString(b, *ev.Answer)
	}
	b = appendIntField(b, "steps", int64(ev.Steps))
	b = appendIntField(b, "tool_call_count", int64(ev.ToolCount))
	if len(ev.Denials) > 0 {
		b = append(b, `,"denials":[`...)
		for i, d := range ev.Denials {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendDenial(b, d)
		}
		b = append(b, ']')
	}
	if len(ev.Changes) > 0 {
		b = append(b, `,"changes":[`...)
		for i := range ev.Changes {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			b = appendChangeFields(b, &ev.Changes[i])
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendIntField(b, "exit_code", int64(ev.ExitCode))
	if len(ev.UsagePerStep) > 0 {
		b = append(b, `,"usage_per_step":[`...)
		for i := range ev.UsagePerStep {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendStepUsage(b, &ev.UsagePerStep[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if len(ev.History) > 0 {
		b = append(b, `,"history":`...)
		if b, err = appendRawList(b, "history", ev.History); err != nil {
			return nil, err
		}
	}

	if finished {
		b = append(b, `,"content":`...)
		b = appendString(b, ev.Content)
		b = append(b, `,"is_error":`...)
		b = strconv.AppendBool(b, ev.IsError)
		b = append(b, `,"duration_ms":`...)
		b = strconv.AppendInt(b, ev.DurationMS, 10)
	}
	return append(b, '}'), nil
}

// appendTime writes the event's time as time.Time's MarshalJSON does, and
// fails where it fails (a year outside 0-9999).
func appendTime(b []byte, ev *Event) ([]byte, error) {
	b = append(b, '"')
	b, err := ev.Time.AppendText(b)
	if err != nil {
		return nil, fmt.Errorf("%s event: %w", ev.Type, err)
	}
	return append(b, '"'), nil
}

func appendSettings(b []byte, s *Settings) ([]byte, error) {
	var err error
	b = append(b, `{"prompt":`...)
	b = appendString(b, s.Prompt)
	if len(s.Attachments) > 0 {
		b = append(b, `,"attachments":[`...)
		for i, a := range s.Attachments {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendAttachment(b, a)
		}
		b = append(b, ']')
	}
	b = append(b, `,"system":`...)
	b = appendString(b, s.System)
	b = appendStringField(b, "project_file", s.ProjectFile)
	b = appendStringField(b, "base_url", s.BaseURL)
	b = appendStringField(b, "workdir", s.Workdir)
	b = append(b, `,"max_steps":`...)
	b = strconv.AppendInt(b, int64(s.MaxSteps), 10)
	b = append(b, `,"timeout":`...)
	b = appendString(b, s.Timeout)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, s.Stream)
	b = append(b, `,"tools":`...)
	b = appendStrings(b, s.Tools)
	b = appendStringField(b, "tool_protocol", s.ToolProtocol)
	if s.Safe {
		b = append(b, `,"safe":true`...)
	}
	b = appendStringField(b, "tools_file", s.ToolsFile)
	if len(s.MCP) > 0 {
		b = append(b, `,"mcp":`...)
		b = appendStrings(b, s.MCP)
	}
	if len(s.UserTools) > 0 {
		b = append(b, `,"user_tools":[`...)
		for i, t := range s.UserTools {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendTool(b, t); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	b = appendIntField(b, "max_tokens", int64(s.MaxTokens))
	if s.Temperature != nil {
		b = append(b, `,"temperature":`...)
		if b, err = appendFloat(b, "temperature", *s.Temperature); err != nil {
			return nil, err
		}
	}
	b = appendStringField(b, "reasoning", s.Reasoning)
	if s.NoCache {
		b = append(b, `,"no_cache":true`...)
	}
	if b, err = appendRawField(b, "schema", s.Schema); err != nil {
		return nil, err
	}
	if len(s.History) > 0 {
		b = append(b, `,"history":`...)
		if b, err = appendRawList(b, "settings history", s.History); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendAttachment writes the bytes in standard base64, as encoding/json
// writes a []byte (nil as null).
func appendAttachment(b []byte, a providers.Attachment) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, a.Name)
	b = append(b, `,"mime_type":`...)
	b = appendString(b, a.MIME)
	b = append(b, `,"data":`...)
	if a.Data == nil {
		return append(b, `null}`...)
	}
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, a.Data)
	return append(b, `"}`...)
}

// appendTool writes a tool's declaration under its Go field names: Tool
// has no JSON tags.
func appendTool(b []byte, t providers.Tool) ([]byte, error) {
	b = append(b, `{"Name":`...)
	b = appendString(b, t.Name)
	b = append(b, `,"Description":`...)
	b = appendString(b, t.Description)
	b = append(b, `,"Parameters":`...)
	b, err := appendRaw(b, "tool "+t.Name+" parameters", t.Parameters)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendToolCall leaves out Unreadable, as its tag "-" does.
func appendToolCall(b []byte, c providers.ToolCall) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, c.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, c.Name)
	b = append(b, `,"arguments":`...)
	b = appendString(b, c.Arguments)
	return append(b, '}')
}

// appendUsageFields writes a usage's members without braces, so that
// StepUsage can write them after its step as encoding/json writes an
// embedded struct.
func appendUsageFields(b []byte, u *providers.Usage) ([]byte, error) {
	b = append(b, `"input_tokens":`...)
	b = strconv.AppendInt(b, int64(u.InputTokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(u.OutputTokens), 10)
	b = append(b, `,"cache_read_tokens":`...)
	b = strconv.AppendInt(b, int64(u.CacheReadTokens), 10)
	b = append(b, `,"cache_write_tokens":`...)
	b = strconv.AppendInt(b, int64(u.CacheWriteTokens), 10)
	b = appendIntField(b, "reasoning_tokens", int64(u.ReasoningTokens))
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.TotalTokens), 10)
	if u.Cost != nil {
		b = append(b, `,"cost":`...)
		return appendFloat(b, "usage cost", *u.Cost)
	}
	return b, nil
}

func appendStepUsage(b []byte, s *StepUsage) ([]byte, error) {
	b = append(b, `{"step":`...)
	b = strconv.AppendInt(b, int64(s.Step), 10)
	b = append(b, ',')
	b, err := appendUsageFields(b, &s.Usage)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendChangeFields writes a change's members without braces: Event
// embeds a *Change, whose members sit among the event's own.
func appendChangeFields(b []byte, c *Change) []byte {
	b = append(b, `"path":`...)
	b = appendString(b, c.Path)
	b = append(b, `,"action":`...)
	b = appendString(b, c.Action)
	b = append(b, `,"tool":`...)
	b = appendString(b, c.Tool)
	if c.LinesAdded != nil {
		b = append(b, `,"lines_added":`...)
		b = strconv.AppendInt(b, int64(*c.LinesAdded), 10)
	}
	if c.LinesRemoved != nil {
		b = append(b, `,"lines_removed":`...)
		b = strconv.AppendInt(b, int64(*c.LinesRemoved), 10)
	}
	return b
}

func appendDenial(b []byte, d Denial) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, d.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, d.Name)
	b = append(b, `,"reason":`...)
	b = appendString(b, d.Reason)
	return append(b, '}')
}

// appendStringField writes ,"key":"value" unless value is empty
// (omitempty). Every field it writes follows type and time, so the comma
// is always due.
func appendStringField(b []byte, key, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendIntField writes ,"key":n unless n is 0 (omitempty).
func appendIntField(b []byte, key string, n int64) []byte {
	if n == 0 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, n, 10)
}

// appendRawField writes ,"key":raw unless raw is empty (omitempty).
func appendRawField(b []byte, key string, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return b, nil
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendRaw(b, key, raw)
}

// appendRaw writes raw compacted, as encoding/json writes a RawMessage
// (nil as null), and fails where it fails: on anything not one valid JSON
// value, the empty message included. Most raw values are already compact
// (requests ask built, the loop's history, tool schemas): those are
// checked by gjson and copied, about twice as fast as encoding/json's
// scanner, which compacts the rest and words the errors (FuzzAppendRaw
// holds the two paths to the same bytes and the same failures).
func appendRaw(b []byte, what string, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(b, "null"...), nil
	}
	if isCompact(raw) && gjson.ValidBytes(raw) {
		return append(b, raw...), nil
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return buf.Bytes(), nil
}

// maxCompactDepth is encoding/json's limit on nesting, which gjson does
// not have: a value nested deeper takes encoding/json's path and fails
// there.
const maxCompactDepth = 10000

// isCompact reports whether raw has no whitespace outside its strings and
// no nesting deeper than encoding/json allows, so that json.Compact would
// return it unchanged if it is valid. It does not check validity.
func isCompact(raw []byte) bool {
	deepest, spaced := providers.Shape(raw)
	return !spaced && deepest <= maxCompactDepth
}

func appendRawList(b []byte, what string, list []json.RawMessage) ([]byte, error) {
	var err error
	b = append(b, '[')
	for i, raw := range list {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendRaw(b, what, raw); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendStrings writes a list of strings, nil as null.
func appendStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendStringMap writes a map with its keys sorted, as encoding/json does.
func appendStringMap(b []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

// appendFloat formats f as encoding/json does (an exponent only below
// 1e-6 or from 1e21 on), through encoding/json itself: a float64's encoder
// costs nothing to build. NaN and infinities are an error.
func appendFloat(b []byte, what string, f float64) ([]byte, error) {
	out, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return append(b, out...), nil
}

// appendString writes s as a JSON string as the events always were:
// encoding/json's escaping without HTML's (providers.Quote). Only the
// struct walk above is written out; a string's encoder costs nothing to
// build.
func appendString(b []byte, s string) []byte {
	return append(b, providers.Quote(s)...)
}
