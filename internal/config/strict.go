package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ask-cli/ask/internal/hooks"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/suggest"
)

// Error is a problem in the config file, at a line and column when it can
// be placed.
type Error struct {
	File         string
	Line, Column int    // 1-based; 0 when unknown
	Key          string // dotted path of the key, "" for the document
	Msg          string
}

func (e *Error) Error() string {
	where := e.File
	if e.Line > 0 {
		where += fmt.Sprintf(":%d:%d", e.Line, e.Column)
	}
	if key := e.Key; key != "" {
		// A name chosen in the file (a profile's, a server's) may hold a
		// line break; the error stays one line.
		if strings.ContainsFunc(key, unicode.IsControl) {
			key = strconv.Quote(key)
		}
		return fmt.Sprintf("config file %s: %s: %s", where, key, e.Msg)
	}
	return fmt.Sprintf("config file %s: %s", where, e.Msg)
}

// position is where a key starts, 1-based.
type position struct{ line, column int }

// errorAt is an Error pointing at a key of the file.
func (f *File) errorAt(key, msg string) error {
	p := f.keys[key]
	return &Error{File: f.path, Line: p.line, Column: p.column, Key: key, Msg: msg}
}

// decodeStrict decodes data into f, after a walk over its tokens has
// checked every key against the file's shape (fileShape): encoding/json's
// own DisallowUnknownFields neither says where the key is nor rejects keys
// that differ only in case, or repeated keys.
func decodeStrict(name string, data []byte, f *File) error {
	w := &walker{dec: json.NewDecoder(bytes.NewReader(data)), data: data, name: name, keys: map[string]position{}}
	w.dec.UseNumber()
	if err := w.document(fileShape()); err != nil {
		return err
	}
	f.keys = w.keys
	var doc struct {
		Profiles   map[string]json.RawMessage `json:"profiles"`
		MCPServers map[string]MCPServer       `json:"mcpServers"`
		Hooks      hooks.Config               `json:"hooks"`
		Prices     map[string]Price           `json:"prices"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return w.typeError(err)
	}
	f.MCPServers, f.Hooks, f.Prices = doc.MCPServers, doc.Hooks, doc.Prices
	var err error
	if f.Layer, err = w.layer(data, ""); err != nil {
		return err
	}
	for name, raw := range doc.Profiles {
		l, err := w.layer(raw, "profiles."+name+".")
		if err != nil {
			return err
		}
		if f.Profiles == nil {
			f.Profiles = map[string]Layer{}
		}
		f.Profiles[name] = l
	}
	return nil
}

// layer decodes one layer's object, whose keys the walk has checked; prefix
// places its keys in the file.
func (w *walker) layer(data []byte, prefix string) (Layer, error) {
	var l struct {
		Providers map[string]Provider `json:"providers"`
		Aliases   map[string]string   `json:"aliases"`
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return Layer{}, w.typeError(err)
	}
	out := Layer{Providers: l.Providers, Aliases: l.Aliases}
	for _, r := range settings.Rows() {
		raw, ok := lookupRaw(data, r.Key)
		if r.Key == "" || !ok {
			continue
		}
		v, err := decodeKind(raw, r.Kind)
		if err != nil {
			p := w.keys[prefix+r.Key]
			return Layer{}, &Error{File: w.name, Line: p.line, Column: p.column, Key: prefix + r.Key, Msg: err.Error()}
		}
		if out.Values == nil {
			out.Values = map[string]any{}
		}
		out.Values[r.Key] = v
	}
	return out, nil
}

// lookupRaw finds the value of a dotted key ("tools.allow") in a JSON
// object.
func lookupRaw(data []byte, key string) (json.RawMessage, bool) {
	head, rest, nested := strings.Cut(key, ".")
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return nil, false
	}
	raw, ok := obj[head]
	if !ok || !nested {
		return raw, ok
	}
	return lookupRaw(raw, rest)
}

// decodeKind decodes a value the walk has type-checked into its kind's Go
// type; a duration is written as a string ("10m").
func decodeKind(raw json.RawMessage, k settings.Kind) (any, error) {
	var err error
	switch k {
	case settings.String:
		var s string
		err = json.Unmarshal(raw, &s)
		return s, err
	case settings.Bool:
		var b bool
		err = json.Unmarshal(raw, &b)
		return b, err
	case settings.Int:
		var i int
		err = json.Unmarshal(raw, &i)
		return i, err
	case settings.Float:
		var f float64
		err = json.Unmarshal(raw, &f)
		return f, err
	case settings.Duration:
		var s string
		if err = json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("%q: give a duration such as 30s or 5m, or 0 for none", s)
		}
		return d, nil
	case settings.List:
		l := []string{}
		err = json.Unmarshal(raw, &l)
		return l, err
	}
	return nil, fmt.Errorf("no kind %d", k)
}

type walker struct {
	dec  *json.Decoder
	data []byte
	name string
	keys map[string]position
}

func (w *walker) document(t *shape) error {
	tok, err := w.dec.Token()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return w.syntaxError(err)
	}
	if tok != json.Delim('{') {
		return w.at(0, "", "the file must hold one JSON object, such as {\"provider\": \"openai\"}")
	}
	if err := w.object(t, ""); err != nil {
		return err
	}
	end := w.dec.InputOffset()
	if _, err := w.dec.Token(); err != io.EOF {
		return w.at(w.skipSpace(int(end)), "", "unexpected text after the settings object")
	}
	return nil
}

// value walks one value that should be of shape t, checking its type; t is
// nil where any value is accepted. Errors point at the key, which starts at
// keyOff.
func (w *walker) value(t *shape, key string, keyOff int) error {
	tok, err := w.dec.Token()
	if err != nil {
		return w.syntaxError(err)
	}
	got := ""
	switch v := tok.(type) {
	case nil:
		return w.at(keyOff, key, "null is not a setting: remove the key to leave it unset")
	case json.Delim:
		if v == '[' {
			if t != nil && t.kind != shapeList {
				return w.at(keyOff, key, fmt.Sprintf("want %s, got a list", t.describe()))
			}
			var elem *shape
			if t != nil {
				elem = t.elem
			}
			for w.dec.More() {
				if err := w.value(elem, key, keyOff); err != nil {
					return err
				}
			}
			_, err := w.dec.Token()
			return w.syntaxError(err)
		}
		if t != nil && t.kind != shapeObject && t.kind != shapeMap {
			return w.at(keyOff, key, fmt.Sprintf("want %s, got an object", t.describe()))
		}
		return w.object(t, key)
	case string:
		if t == nil || t.kind == shapeString {
			return nil
		}
		got = "a string"
	case bool:
		if t == nil || t.kind == shapeBool {
			return nil
		}
		got = fmt.Sprint(v)
	case json.Number:
		if t == nil {
			return nil
		}
		if _, err := v.Int64(); err == nil && t.kind == shapeInt {
			return nil
		}
		if t.kind == shapeFloat {
			return nil
		}
		got = v.String()
	}
	return w.at(keyOff, key, fmt.Sprintf("want %s, got %s", t.describe(), got))
}

func (w *walker) object(t *shape, path string) error {
	seen := map[string]bool{}
	for w.dec.More() {
		start := w.skipSpace(int(w.dec.InputOffset()))
		tok, err := w.dec.Token()
		if err != nil {
			return w.syntaxError(err)
		}
		name, _ := tok.(string)
		key := join(path, name)
		if seen[name] {
			return w.at(start, key, "appears twice in the same object: keep one")
		}
		seen[name] = true
		var sub *shape
		if t != nil {
			switch t.kind {
			case shapeObject:
				ft, ok := t.fields[name]
				if !ok {
					return w.at(start, "", unknownKey(name, path, t.fields))
				}
				sub = ft
			case shapeMap:
				sub = t.elem
			}
		}
		w.keys[key] = w.position(start)
		if err := w.value(sub, key, start); err != nil {
			return err
		}
	}
	_, err := w.dec.Token()
	return w.syntaxError(err)
}

// skipSpace moves an offset past the blanks and separators that precede
// the next token.
func (w *walker) skipSpace(off int) int {
	for off < len(w.data) && strings.IndexByte(" \t\r\n,:", w.data[off]) >= 0 {
		off++
	}
	return off
}

func (w *walker) position(off int) position {
	off = min(off, len(w.data))
	before := w.data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := off - bytes.LastIndexByte(before, '\n')
	return position{line, col}
}

func (w *walker) at(off int, key, msg string) error {
	p := w.position(off)
	return &Error{File: w.name, Line: p.line, Column: p.column, Key: key, Msg: msg}
}

// syntaxError places encoding/json's syntax errors.
func (w *walker) syntaxError(err error) error {
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return w.at(int(se.Offset), "", "not valid JSON: "+se.Error())
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return w.at(len(w.data), "", "not valid JSON: the file ends in the middle of a value")
	}
	return &Error{File: w.name, Msg: "not valid JSON: " + err.Error()}
}

// typeError reports what the walk did not catch; it checks every type, so
// this is a fallback.
func (w *walker) typeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return w.at(int(te.Offset), "", fmt.Sprintf("want %s, got %s", shapeOf(te.Type).describe(), te.Value))
	}
	return w.syntaxError(err)
}

// topLevelOnly are the sections a profile cannot hold.
var topLevelOnly = map[string]bool{"hooks": true, "prices": true}

var topLevelOnlyWhy = map[string]string{
	"hooks":  "a profile may be chosen by $ASK_PROFILE, and must not swap the guards on every call",
	"prices": "a model costs the same in every profile",
}

// unknownKey names the key and suggests the closest known one.
func unknownKey(name, path string, fields map[string]*shape) string {
	if path == "" && (name == "servers" || name == "inputs") {
		// .vscode/mcp.json: {"servers": {...}, "inputs": [...]}
		return fmt.Sprintf("unknown key %q at the top level: VS Code's mcp.json calls it servers: put the block under mcpServers (inputs has no counterpart: name environment variables as ${NAME})", name)
	}
	where := "at the top level"
	if path != "" {
		where = "in " + path
	}
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	sort.Strings(known)
	if topLevelOnly[name] && strings.HasPrefix(path, "profiles.") {
		return fmt.Sprintf("%q in %s: belongs to the top level of the file, not to a profile (%s)", name, path, topLevelOnlyWhy[name])
	}
	if best := suggest.Nearest(strings.ToLower(name), known, 2); best != "" {
		return fmt.Sprintf("unknown key %q %s: did you mean %q?", name, where, best)
	}
	return fmt.Sprintf("unknown key %q %s: known keys are %s", name, where, strings.Join(known, ", "))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
