// Package jsonpos finds where JSON input goes wrong, so that a message can
// name the line and column of the fault: a syntax error, a value of the
// wrong type, an event of a recorded stream that is not JSON.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Error is bad input, located. Its message starts with the input's name.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &Error{msg: fmt.Sprintf(format, args...)} }

// Check reports whether data is one JSON value, naming the line and column
// of the first fault. name is the input's name in messages ("stdin").
func Check(name string, data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errorf("%s is empty: expected JSON", name)
	}
	if json.Valid(data) {
		return nil // decoding to find faults would also refuse a number too large for a float64
	}
	var v any
	err := json.Unmarshal(data, &v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := syntaxPosition(data, syn)
		return errorf("%s: invalid JSON at line %d, column %d: %v", name, line, col, syn)
	}
	return errorf("%s: %v", name, err)
}

// Decode checks data's syntax, then decodes it into v, naming the line and
// column of a value of the wrong type.
func Decode(name string, data []byte, v any) error {
	if err := Check(name, data); err != nil {
		return err
	}
	err := json.Unmarshal(data, v)
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		line, col := Position(data, valueStart(data, typ))
		where := typ.Field
		if where == "" {
			where = "the value"
		}
		return errorf("%s: line %d, column %d: %s is a JSON %s, expected %s", name, line, col, where, typ.Value, jsonKind(typ.Type.Kind().String()))
	}
	if err != nil {
		return errorf("%s: %v", name, err)
	}
	return nil
}

// At is a fault found by the caller at byte offset off of data, located:
// "NAME: line L, column C: MESSAGE".
func At(name string, data []byte, off int, format string, args ...any) error {
	line, col := Position(data, int64(off))
	return errorf("%s: line %d, column %d: %s", name, line, col, fmt.Sprintf(format, args...))
}

// CheckStream checks that every event of a recorded stream holds one JSON
// value (OpenAI's closing "[DONE]" excepted), naming the line and column
// of the first fault: one value a line for NDJSON, the joined data lines
// of each event for SSE.
func CheckStream(name string, data []byte, ndjson bool) error {
	lines := bytes.Split(data, []byte("\n"))
	if ndjson {
		for i, line := range lines {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if err := syntaxFault(line); err != nil {
				_, col := syntaxPosition(line, err)
				return streamFault(name, i+1, col, err)
			}
		}
		return nil
	}
	// An SSE event's data lines join into one value, which ends at a blank
	// line (or the end of the input).
	var value []byte
	var starts []int // for each data line: its line number
	var cols []int   // for each data line: the column where its value begins
	flush := func() error {
		defer func() { value, starts, cols = nil, nil, nil }()
		if len(starts) == 0 || string(bytes.TrimSpace(value)) == "[DONE]" {
			return nil
		}
		err := syntaxFault(value)
		if err == nil {
			return nil
		}
		// The fault's line within the event's data is the data line it is on.
		line, col := syntaxPosition(value, err)
		k := min(line-1, len(starts)-1)
		return streamFault(name, starts[k], cols[k]+col-1, err)
	}
	for i, raw := range lines {
		line := bytes.TrimSuffix(raw, []byte("\r"))
		if len(line) == 0 {
			if err := flush(); err != nil {
				return err
			}
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			col := len("data:") + 1
			if trimmed, spaced := bytes.CutPrefix(v, []byte(" ")); spaced {
				v, col = trimmed, col+1
			}
			if len(starts) > 0 {
				value = append(value, '\n')
			}
			value = append(value, v...)
			starts, cols = append(starts, i+1), append(cols, col)
		}
	}
	return flush()
}

// syntaxFault returns the syntax error of a value that is not JSON, or nil.
func syntaxFault(b []byte) *json.SyntaxError {
	if json.Valid(b) {
		return nil
	}
	var v any
	err := json.Unmarshal(b, &v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return syn
	}
	if err != nil {
		return &json.SyntaxError{Offset: 0}
	}
	return nil
}

func streamFault(name string, line, col int, err *json.SyntaxError) error {
	msg := "not valid JSON"
	if err.Error() != "" {
		msg = err.Error()
	}
	return errorf("%s: invalid JSON in the stream at line %d, column %d: %s", name, line, col, msg)
}

// syntaxPosition is the line and column of the byte a syntax error is
// about: the decoder's offset counts that byte as read, except at the end
// of the input, where the position is just past the last byte.
func syntaxPosition(data []byte, err *json.SyntaxError) (line, col int) {
	off := err.Offset
	if off > 0 && off <= int64(len(data)) && !strings.HasPrefix(err.Error(), "unexpected end") {
		off--
	}
	return Position(data, off)
}

// valueStart finds where the value of a type error begins. The decoder
// stops just after a string or a literal and just inside an object or
// array.
func valueStart(data []byte, err *json.UnmarshalTypeError) int64 {
	off := min(max(err.Offset-1, 0), int64(len(data)-1))
	if off < 0 {
		return 0
	}
	if err.Value != "string" || data[off] != '"' {
		// A number, true, false or null: back to its first character.
		for off > 0 && isLiteralByte(data[off-1]) && isLiteralByte(data[off]) {
			off--
		}
		return off
	}
	for i := off - 1; i >= 0; i-- {
		if data[i] != '"' {
			continue
		}
		backslashes := 0
		for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i
		}
	}
	return off
}

// isLiteralByte reports whether b can be part of a number, true, false or
// null.
func isLiteralByte(b byte) bool { return strings.IndexByte("0123456789+-.eEtruefalsn", b) >= 0 }

// Position converts a 0-based byte offset into a 1-based line and column.
func Position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	return 1 + bytes.Count(before, []byte("\n")), int(off) - bytes.LastIndexByte(before, '\n')
}

// jsonKind names a Go kind the way a JSON user would.
func jsonKind(kind string) string {
	switch kind {
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int64", "float64":
		return "a number"
	}
	return kind
}
