package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"

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
// checked every key against the fields of File: encoding/json's own
// DisallowUnknownFields neither says where the key is nor rejects keys that
// differ only in case, or repeated keys.
func decodeStrict(name string, data []byte, f *File) error {
	w := &walker{dec: json.NewDecoder(bytes.NewReader(data)), data: data, name: name, keys: map[string]position{}}
	w.dec.UseNumber()
	if err := w.document(reflect.TypeOf(f).Elem()); err != nil {
		return err
	}
	f.keys = w.keys
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(f); err != nil {
		return w.typeError(err)
	}
	return nil
}

type walker struct {
	dec  *json.Decoder
	data []byte
	name string
	keys map[string]position
}

func (w *walker) document(t reflect.Type) error {
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

// value walks one value that should be of type t, checking its type; t is
// nil where any value is accepted. Errors point at the key, which starts at
// keyOff.
func (w *walker) value(t reflect.Type, key string, keyOff int) error {
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
			if t != nil && t.Kind() != reflect.Slice {
				return w.at(keyOff, key, fmt.Sprintf("want %s, got a list", describeType(t)))
			}
			var elem reflect.Type
			if t != nil {
				elem = t.Elem()
			}
			for w.dec.More() {
				if err := w.value(elem, key, keyOff); err != nil {
					return err
				}
			}
			_, err := w.dec.Token()
			return w.syntaxError(err)
		}
		if t != nil && t.Kind() != reflect.Struct && t.Kind() != reflect.Map {
			return w.at(keyOff, key, fmt.Sprintf("want %s, got an object", describeType(t)))
		}
		return w.object(t, key)
	case string:
		if t == nil || t.Kind() == reflect.String {
			return nil
		}
		got = "a string"
	case bool:
		if t == nil || t.Kind() == reflect.Bool {
			return nil
		}
		got = fmt.Sprint(v)
	case json.Number:
		if t == nil {
			return nil
		}
		if _, err := v.Int64(); err == nil && t.Kind() == reflect.Int {
			return nil
		}
		if t.Kind() == reflect.Float64 {
			return nil
		}
		got = v.String()
	}
	return w.at(keyOff, key, fmt.Sprintf("want %s, got %s", describeType(t), got))
}

func (w *walker) object(t reflect.Type, path string) error {
	fields := fieldsOf(t)
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
		var sub reflect.Type
		if t != nil {
			switch t.Kind() {
			case reflect.Struct:
				ft, ok := fields[name]
				if !ok {
					return w.at(start, "", unknownKey(name, path, fields))
				}
				sub = ft
			case reflect.Map:
				sub = t.Elem()
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
		return w.at(int(te.Offset), "", fmt.Sprintf("want %s, got %s", describeType(te.Type), te.Value))
	}
	return w.syntaxError(err)
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(describeType(t.Elem()), "a ") + "s"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

// fieldsOf maps the JSON keys of a struct to their types, embedded structs
// included; it is nil for other types.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			for k, v := range fieldsOf(sf.Type) {
				fields[k] = v
			}
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "" || name == "-" {
			continue
		}
		fields[name] = sf.Type
	}
	return fields
}

// unknownKey names the key and suggests the closest known one.
func unknownKey(name, path string, fields map[string]reflect.Type) string {
	where := "at the top level"
	if path != "" {
		where = "in " + path
	}
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	sort.Strings(known)
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
