package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// JoinArray renders raw JSON values as one JSON array. Building the array in
// one pass keeps request building linear; appending with sjson's "-1" path in
// a loop is quadratic.
func JoinArray(items []json.RawMessage) json.RawMessage {
	b := make([]byte, 0, 2+itemsLen(items))
	b = append(b, '[')
	b = appendItems(b, items)
	return append(b, ']')
}

// appendItems appends items to b, separated by commas: an array's
// elements, without its brackets.
func appendItems(b []byte, items []json.RawMessage) []byte {
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return b
}

// itemsLen is how many bytes appendItems appends.
func itemsLen(items []json.RawMessage) int {
	n := 0
	for _, it := range items {
		n += len(it) + 1
	}
	return n
}

// CallID is a tool call's id as it goes back to the provider: in JSON,
// which spells bytes that are not UTF-8 as U+FFFD. A call keeps that
// spelling, so that its echo and the result naming it agree with each
// other, and answer an id the provider can read.
func CallID(id string) string { return strings.ToValidUTF8(id, "\uFFFD") }

// Quote renders s as a JSON string without escaping <, > and &, so text
// round-trips byte for byte. Most strings a run quotes (types, names, ids,
// models, URLs) are printable ASCII with nothing to escape, which
// encoding/json writes as they are: those are copied between quotes, and
// the encoder, built anew for each string, writes the rest (FuzzQuote
// holds the two to the same bytes).
func Quote(s string) json.RawMessage {
	if isPlainASCII(s) {
		return AppendQuote(make([]byte, 0, len(s)+2), s)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// AppendQuote appends Quote(s) to b, without allocating when s is plain
// ASCII.
func AppendQuote(b []byte, s string) []byte {
	if isPlainASCII(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	return append(b, Quote(s)...)
}

// isPlainASCII reports whether s is printable ASCII without a quote or a
// backslash: a JSON string of it is s between quotes.
func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Set is sjson.SetBytes with the path named in its error. Paths must be
// static literals: a dynamic key needs escaping that sjson does not do.
func Set(doc []byte, path string, v any) ([]byte, error) {
	out, err := sjson.SetBytes(doc, path, v)
	if err != nil {
		return nil, fmt.Errorf("set %s: %w", path, err)
	}
	return out, nil
}

// SetRaw is sjson.SetRawBytes for a value that must already be valid JSON.
func SetRaw(doc []byte, path string, raw []byte) ([]byte, error) {
	if !gjson.ValidBytes(raw) {
		return nil, fmt.Errorf("set %s: value is not valid JSON", path)
	}
	out, err := sjson.SetRawBytes(doc, path, raw)
	if err != nil {
		return nil, fmt.Errorf("set %s: %w", path, err)
	}
	return out, nil
}

// FillArray writes items into the empty array at path in doc, an object
// built small with sjson around that placeholder: setting a long
// conversation first and the fields after it would copy the conversation
// once a field. The items must already be valid JSON; each is copied once.
func FillArray(doc []byte, path string, items []json.RawMessage) ([]byte, error) {
	at := gjson.GetBytes(doc, path)
	if at.Raw != "[]" || at.Index <= 0 || doc[at.Index] != '[' {
		return nil, fmt.Errorf("fill %s: no empty array there", path)
	}
	out := make([]byte, 0, len(doc)+itemsLen(items))
	out = append(out, doc[:at.Index+1]...)
	out = appendItems(out, items)
	return append(out, doc[at.Index+1:]...), nil
}

// SchemaInstruction introduces an answer's JSON Schema in a system prompt,
// for a model or request that cannot take it as native structured output.
// It speaks of the final answer: the model may call tools before it.
const SchemaInstruction = "Your final answer must be one JSON value that conforms to the JSON Schema below, and nothing else: no prose, no code fences.\n"

// Field is one member of an object written by Object; a nil Value leaves
// the member out.
type Field struct {
	Key   string // a literal key, written as it is: no escaping is done
	Value json.RawMessage
	// items, set by ArrayField, are the value's elements, written as an
	// array in place of Value.
	items   []json.RawMessage
	isArray bool
}

// ArrayField is the field key whose value is the array of items, written
// straight into the object: a conversation is copied into the body once,
// not first into an array of its own (JoinArray) and then again.
func ArrayField(key string, items []json.RawMessage) Field {
	return Field{Key: key, items: items, isArray: true}
}

// Object writes {"key": value, ...} in the order given, copying each value
// once; a field without a value is left out. The values must already be
// valid JSON: this is for a request body whose large parts (the
// conversation) were validated piece by piece, where setting them with
// sjson would copy the whole body once a field.
func Object(fields ...Field) []byte {
	n := 2
	for _, f := range fields {
		n += len(f.Key) + len(f.Value) + 4
		if f.isArray {
			n += 2 + itemsLen(f.items)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for _, f := range fields {
		if f.Value == nil && !f.isArray {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, f.Key...)
		b = append(b, '"', ':')
		if !f.isArray {
			b = append(b, f.Value...)
			continue
		}
		b = append(b, '[')
		b = appendItems(b, f.items)
		b = append(b, ']')
	}
	return append(b, '}')
}

// Member is a top-level member of an object to read, and where its value
// goes.
type Member struct {
	Key string
	Dst *gjson.Result
}

// ReadMembers reads the members of an object in one pass, rather than one
// scan a member as gjson.Get would: stream events, most of a reply, are
// read this way. The first of duplicate keys wins, as with gjson.Get.
func ReadMembers(doc gjson.Result, members ...Member) {
	doc.ForEach(func(k, v gjson.Result) bool {
		for _, m := range members {
			if k.Str == m.Key {
				if !m.Dst.Exists() {
					*m.Dst = v
				}
				break
			}
		}
		return true
	})
}

// OptionalObject is Object, or nil, which an enclosing Object leaves out,
// when no field has a value.
func OptionalObject(fields ...Field) json.RawMessage {
	for _, f := range fields {
		if f.Value != nil || f.isArray {
			return Object(fields...)
		}
	}
	return nil
}

// Number is f as a JSON number, in the shortest form that reads back as f.
func Number(f float64) json.RawMessage { return strconv.AppendFloat(nil, f, 'f', -1, 64) }

// OptionalNumber is *f as a JSON number, or nil (left out) when f is nil.
func OptionalNumber(f *float64) json.RawMessage {
	if f == nil {
		return nil
	}
	return Number(*f)
}

// OptionalString is s as a JSON string, or nil (left out) when s is "".
func OptionalString(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return Quote(s)
}

// Int is n as a JSON number.
func Int(n int) json.RawMessage { return strconv.AppendInt(nil, int64(n), 10) }

// Bool is b as JSON.
func Bool(b bool) json.RawMessage { return strconv.AppendBool(nil, b) }

// AppendHistory returns a request body of p with msgs added at the end of
// its conversation (p.HistoryField()). Every other byte of the body stays as
// it was, the conversation's own included, and msgs go in verbatim, so
// whatever the provider needs back (thinking blocks, signatures,
// reasoning items) is echoed as it came. The body is copied once, with
// msgs written in before the array's closing bracket.
func AppendHistory(p Protocol, body []byte, msgs []json.RawMessage) ([]byte, error) {
	field := p.HistoryField()
	hist := gjson.GetBytes(body, field)
	if !hist.IsArray() || hist.Index <= 0 {
		return nil, fmt.Errorf("the request body has no %q array, where %s requests hold the conversation: is it a request of another provider?", field, p.Name())
	}
	for i, m := range msgs {
		if !json.Valid(m) {
			return nil, fmt.Errorf("message %d to append is not valid JSON", i)
		}
	}
	if len(msgs) == 0 {
		return body, nil
	}
	end := hist.Index + len(hist.Raw) - 1 // the array's ']'
	out := make([]byte, 0, len(body)+itemsLen(msgs))
	out = append(out, body[:end]...)
	if strings.TrimSpace(hist.Raw[1:len(hist.Raw)-1]) != "" {
		out = append(out, ',')
	}
	out = appendItems(out, msgs)
	return append(out, body[end:]...), nil
}
