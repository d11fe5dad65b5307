// Package batch runs many tasks of ask (DESIGN §8): it reads and checks
// task lines, writes result lines that survive a kill, finds the tasks a
// rerun may skip, splits a task file into shards, and runs the tasks on a
// pool of workers paced by one limiter for the process.
package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/suggest"
)

// Task is one line of the task file: its id, its prompt and the run
// settings it gives, which lie over the command line's.
type Task struct {
	ID     string
	Prompt string
	// Settings are the settings the line gives, each with the source
	// "task line N".
	Settings settings.Values
	// Line is the task's line in the file, from 1.
	Line int
	// Raw is the line itself, which a batch left pending keeps.
	Raw []byte
}

// LineError is a task line that cannot be run: its result line says why.
type LineError struct {
	Line int
	// ID is the line's id when it could be read, "" otherwise.
	ID  string
	Msg string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// keys maps every key a task line may hold to the row it sets: each
// setting's flag name ("max-steps"), and its config file key where that is
// a plain word that differs ("max_steps").
var keys = sync.OnceValue(func() map[string]settings.Row {
	m := map[string]settings.Row{}
	for _, r := range settings.Rows() {
		if !r.IsSetting() {
			continue
		}
		m[r.Name] = r
		if r.Key != "" && r.Key != r.Name && !strings.Contains(r.Key, ".") {
			m[r.Key] = r
		}
	}
	return m
})

// knownKeys are the keys of a task line, sorted, for suggestions.
var knownKeys = sync.OnceValue(func() []string {
	out := []string{"id", "prompt"}
	for k := range keys() {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
})

// ParseTask reads one task line, checked as strictly as the config file:
// one JSON object, a string id and prompt, every other key a run setting
// of its kind, no key twice.
func ParseTask(data []byte, line int) (Task, error) {
	t := Task{Line: line}
	fail := func(format string, args ...any) (Task, error) {
		return Task{}, &LineError{Line: line, ID: t.ID, Msg: fmt.Sprintf(format, args...)}
	}
	// The id first, so that the error of a line with one names its task.
	var probe struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(data, &probe) == nil {
		if id, ok := probe.ID.(string); ok {
			t.ID = id
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fail("not valid JSON: %v", jsonMsg(err))
	}
	if tok != json.Delim('{') {
		return fail(`want a JSON object such as {"id": "a", "prompt": "..."}`)
	}
	seen := map[string]string{} // row name (or id, prompt) → the key that gave it
	var hasID, hasPrompt bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail("not valid JSON: %v", jsonMsg(err))
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fail("not valid JSON: %v", jsonMsg(err))
		}
		name := key
		row, isSetting := keys()[key]
		if isSetting {
			name = row.Name
		} else if key != "id" && key != "prompt" {
			return fail("%s", unknownKey(key))
		}
		if first, dup := seen[name]; dup {
			if first == key {
				return fail("key %q appears twice: keep one", key)
			}
			return fail("keys %q and %q are the same setting: keep one", first, key)
		}
		seen[name] = key
		switch {
		case key == "id":
			if t.ID, err = nonEmptyString(raw); err != nil {
				return fail("id: %v", err)
			}
			hasID = true
		case key == "prompt":
			if t.Prompt, err = nonEmptyString(raw); err != nil {
				return fail("prompt: %v", err)
			}
			hasPrompt = true
		default:
			v, err := decodeKind(raw, row.Kind)
			if err != nil {
				return fail("%s: %v", key, err)
			}
			if v, err = row.Parse(v); err != nil {
				return fail("%s: %v", key, err)
			}
			if err := t.Settings.Set(row.Name, v, fmt.Sprintf("task line %d", line)); err != nil {
				return fail("%s: %v", key, err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return fail("not valid JSON: %v", jsonMsg(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail("unexpected text after the task's object")
	}
	switch {
	case !hasID:
		return fail(`no "id": every task needs one, unique in the file`)
	case !hasPrompt:
		return fail(`no "prompt"`)
	}
	t.Raw = bytes.Clone(data)
	return t, nil
}

// unknownKey names the key and the nearest known one.
func unknownKey(key string) string {
	if best := suggest.Nearest(strings.ToLower(key), knownKeys(), 2); best != "" {
		return fmt.Sprintf("unknown key %q: did you mean %q?", key, best)
	}
	return fmt.Sprintf("unknown key %q: a task takes id, prompt and run settings by their flag names (model, max-steps, workdir, schema, …)", key)
}

func nonEmptyString(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("want a string, got %s", describe(raw))
	}
	if strings.TrimSpace(s) == "" {
		return "", errors.New("empty")
	}
	return s, nil
}

// decodeKind decodes raw as a value of kind k, in the config file's
// forms: a duration is a string ("10m"), a list is of strings.
func decodeKind(raw json.RawMessage, k settings.Kind) (any, error) {
	want := func(what string) error { return fmt.Errorf("want %s, got %s", what, describe(raw)) }
	if string(raw) == "null" {
		return nil, errors.New("null is not a setting: remove the key to leave it unset")
	}
	switch k {
	case settings.Bool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil, want("true or false")
		}
		return b, nil
	case settings.Int:
		var n json.Number // which would take a number in a string too
		if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
			return nil, want("a whole number")
		}
		i, err := n.Int64()
		if err != nil || int64(int(i)) != i {
			return nil, want("a whole number")
		}
		return int(i), nil
	case settings.Float:
		var f float64
		if json.Unmarshal(raw, &f) != nil {
			return nil, want("a number")
		}
		return f, nil
	case settings.Duration:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, want(`a duration such as "30s"`)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("%q: give a duration such as 30s or 5m, or 0 for none", s)
		}
		return d, nil
	case settings.List:
		var l []string
		if json.Unmarshal(raw, &l) != nil || l == nil {
			return nil, want("a list of strings")
		}
		return l, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, want("a string")
	}
	return s, nil
}

// describe names what a JSON value is, for "want …, got …".
func describe(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		if len(raw) > 40 {
			return "a string"
		}
	}
	return string(raw)
}

// jsonMsg is encoding/json's error without its prefix.
func jsonMsg(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the line ends in the middle of a value"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// EncodeSettings is the settings v gives, as a task line would give them:
// a JSON object by flag name (a duration as "30s").
func EncodeSettings(v settings.Values) (json.RawMessage, error) {
	out := map[string]any{}
	for _, r := range settings.Rows() {
		if !r.IsSetting() {
			continue
		}
		val, _, ok := v.Get(r.Name)
		if !ok {
			continue
		}
		if d, isDur := val.(time.Duration); isDur {
			val = d.String()
		}
		out[r.Name] = val
	}
	return json.Marshal(out)
}

// DecodeSettings reads what EncodeSettings wrote, each setting checked as
// a task line's and given the source source.
func DecodeSettings(raw json.RawMessage, source string) (settings.Values, error) {
	var v settings.Values
	if len(raw) == 0 {
		return v, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return v, fmt.Errorf("the settings: %v", jsonMsg(err))
	}
	for name, val := range m {
		row, ok := keys()[name]
		if !ok {
			return v, fmt.Errorf("the settings: %s", unknownKey(name))
		}
		x, err := decodeKind(val, row.Kind)
		if err == nil {
			x, err = row.Parse(x)
		}
		if err == nil {
			err = v.Set(row.Name, x, source)
		}
		if err != nil {
			return v, fmt.Errorf("the settings: %s: %v", name, err)
		}
	}
	return v, nil
}
