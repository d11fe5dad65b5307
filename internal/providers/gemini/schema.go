package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// maxSchemaDepth bounds the nesting cleanSchema follows; deeper subschemas
// become {} (any value).
const maxSchemaDepth = 40

// cleanSchema turns a JSON Schema into the OpenAPI 3.0 subset Gemini's
// Schema accepts, recursively:
//
//   - local $ref (#/$defs/X, #/definitions/X, any JSON pointer into the
//     schema) is inlined, siblings winning; a reference back into itself
//     becomes {} at the point where it recurs;
//   - allOf is merged into its schema (properties joined, required
//     united); anyOf and oneOf become anyOf, and a {"type":"null"}
//     alternative becomes nullable, inlining the one that is left;
//   - a type list ["string","null"] becomes type STRING plus nullable;
//     types are upper-cased (STRING, OBJECT, ...);
//   - const becomes a one-value enum; enum values become strings (Gemini's
//     enum is a list of strings), null making the schema nullable;
//   - format stays only where Gemini knows it (date-time and enum for
//     strings, int32/int64, float/double);
//   - required keeps only names that are among the properties;
//   - every other keyword ($schema, $id, $defs, additionalProperties,
//     patternProperties, not, if/then/else, examples, default, title, ...)
//     is dropped.
//
// Key order is kept, so the result is stable for a given input.
func cleanSchema(raw []byte) (json.RawMessage, error) {
	if !gjson.ValidBytes(raw) {
		return nil, errors.New("schema is not valid JSON")
	}
	root := gjson.ParseBytes(raw)
	if !root.IsObject() {
		return nil, errors.New("schema is not a JSON object")
	}
	c := &cleaner{root: root}
	return c.clean(root, nil, 0), nil
}

type cleaner struct {
	root gjson.Result
}

// members are a schema's keywords in order, as they stand after $ref and
// allOf were merged in.
type members struct {
	keys []string
	vals map[string]gjson.Result
}

func newMembers() *members { return &members{vals: map[string]gjson.Result{}} }

func (m *members) has(k string) bool { _, ok := m.vals[k]; return ok }

// set puts k, keeping its first position.
func (m *members) set(k string, v gjson.Result) {
	if !m.has(k) {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

func (m *members) del(k string) {
	if !m.has(k) {
		return
	}
	delete(m.vals, k)
	for i, key := range m.keys {
		if key == k {
			m.keys = append(m.keys[:i], m.keys[i+1:]...)
			break
		}
	}
}

// absorb merges another schema's keywords under m's: properties are joined
// (m's first), required lists united, and other keywords kept where m has
// none.
func (m *members) absorb(o *members) {
	for _, k := range o.keys {
		v := o.vals[k]
		switch {
		case !m.has(k):
			m.set(k, v)
		case k == "properties" && m.vals[k].IsObject() && v.IsObject():
			m.vals[k] = joinObjects(m.vals[k], v)
		case k == "required" && m.vals[k].IsArray() && v.IsArray():
			m.vals[k] = joinStrings(m.vals[k], v)
		}
	}
}

// flatten reads a schema's keywords with its $ref and allOf merged in and
// a null alternative of anyOf/oneOf taken out. stack holds the references
// being expanded above this point; expanded returns the ones this schema
// added, to be passed down to its subschemas.
func (c *cleaner) flatten(s gjson.Result, stack []string, depth int) (m *members, nullable bool, expanded []string) {
	m = newMembers()
	if !s.IsObject() || depth > maxSchemaDepth {
		return m, false, nil
	}
	own := newMembers()
	s.ForEach(func(k, v gjson.Result) bool {
		if !own.has(k.Str) { // the first of duplicate keys wins, as with gjson.Get
			own.set(k.Str, v)
		}
		return true
	})
	if ref := own.vals["$ref"]; ref.Type == gjson.String {
		if target, ok := c.resolve(ref.Str); ok && !slices.Contains(stack, ref.Str) {
			inner := append(slices.Clip(stack), ref.Str)
			tm, tn, te := c.flatten(target, inner, depth+1)
			m.absorb(tm)
			nullable = nullable || tn
			expanded = append(append(expanded, ref.Str), te...)
		}
	}
	for _, k := range own.keys {
		if k != "$ref" && k != "allOf" {
			m.set(k, own.vals[k]) // siblings of $ref win over its target
		}
	}
	for _, sub := range own.vals["allOf"].Array() {
		sm, sn, se := c.flatten(sub, append(slices.Clip(stack), expanded...), depth+1)
		m.absorb(sm)
		nullable = nullable || sn
		expanded = append(expanded, se...)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		alts, ok := m.vals[k]
		if !ok {
			continue
		}
		m.del(k)
		var keep []gjson.Result
		for _, a := range alts.Array() {
			if isNullSchema(a) {
				nullable = true
				continue
			}
			keep = append(keep, a)
		}
		switch {
		case len(keep) == 1:
			sm, sn, se := c.flatten(keep[0], append(slices.Clip(stack), expanded...), depth+1)
			m.absorb(sm)
			nullable = nullable || sn
			expanded = append(expanded, se...)
		case len(keep) > 1 && !m.has("anyOf"):
			m.set("anyOf", joinArray(keep))
		}
	}
	return m, nullable, expanded
}

// clean renders one schema in Gemini's subset.
func (c *cleaner) clean(s gjson.Result, stack []string, depth int) []byte {
	if depth > maxSchemaDepth {
		return []byte(`{}`)
	}
	m, nullable, expanded := c.flatten(s, stack, depth)
	inner := append(slices.Clip(stack), expanded...)
	sub := func(v gjson.Result) []byte { return c.clean(v, inner, depth+1) }

	types, typeNullable := readTypes(m.vals["type"])
	nullable = nullable || typeNullable
	mainType := ""
	if len(types) == 1 {
		mainType = types[0]
	}
	props := map[string]bool{}
	m.vals["properties"].ForEach(func(k, v gjson.Result) bool {
		if v.IsObject() || v.Type == gjson.True {
			props[k.Str] = true
		}
		return true
	})

	var w objectWriter
	for _, k := range m.keys {
		v := m.vals[k]
		switch k {
		case "type":
			switch {
			case len(types) == 1:
				w.field(k, providers.Quote(types[0]))
			case len(types) > 1 && !m.has("anyOf"):
				alts := make([]json.RawMessage, len(types))
				for i, t := range types {
					alts[i] = json.RawMessage(`{"type":` + string(providers.Quote(t)) + `}`)
				}
				w.field("anyOf", providers.JoinArray(alts))
			}
		case "description", "pattern":
			if v.Type == gjson.String {
				w.field(k, providers.Quote(v.Str))
			}
		case "format":
			if v.Type == gjson.String && formatKnown(mainType, v.Str) {
				w.field(k, providers.Quote(v.Str))
			}
		case "enum", "const":
			if k == "const" && m.has("enum") {
				continue
			}
			values := v
			if k == "const" {
				values = gjson.Parse("[" + v.Raw + "]")
			}
			if enum, null, ok := enumStrings(values); ok {
				nullable = nullable || null
				if len(enum) > 0 {
					w.field("enum", enum)
				}
			}
		case "nullable":
			nullable = nullable || v.Type == gjson.True
		case "properties":
			if !v.IsObject() {
				continue
			}
			var pw objectWriter
			v.ForEach(func(name, ps gjson.Result) bool {
				switch {
				case ps.IsObject():
					pw.field(name.Str, sub(ps))
				case ps.Type == gjson.True:
					pw.field(name.Str, []byte(`{}`))
				}
				return true
			})
			w.field(k, pw.bytes())
		case "required":
			var names []json.RawMessage
			for _, n := range v.Array() {
				if n.Type == gjson.String && props[n.Str] {
					names = append(names, providers.Quote(n.Str))
				}
			}
			if len(names) > 0 {
				w.field(k, providers.JoinArray(names))
			}
		case "items":
			switch {
			case v.IsObject():
				w.field(k, sub(v))
			case v.IsArray() && len(v.Array()) == 1: // draft-07 tuple of one
				w.field(k, sub(v.Array()[0]))
			case v.IsArray() && len(v.Array()) > 1:
				var alts []json.RawMessage
				for _, it := range v.Array() {
					alts = append(alts, sub(it))
				}
				w.field(k, []byte(`{"anyOf":`+string(providers.JoinArray(alts))+`}`))
			}
		case "anyOf":
			var alts []json.RawMessage
			for _, a := range v.Array() {
				alts = append(alts, sub(a))
			}
			if len(alts) > 0 {
				w.field(k, providers.JoinArray(alts))
			}
		case "minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties":
			if v.Type == gjson.Number && v.Num >= 0 && v.Num == float64(int64(v.Num)) {
				w.field(k, []byte(v.Raw))
			}
		case "minimum", "maximum":
			if v.Type == gjson.Number {
				w.field(k, []byte(v.Raw))
			}
		case "propertyOrdering":
			if names, ok := stringArray(v); ok {
				w.field(k, names)
			}
		}
	}
	if nullable {
		w.field("nullable", []byte(`true`))
	}
	return w.bytes()
}

// resolve finds a local reference: "#" or a JSON pointer from the root.
func (c *cleaner) resolve(ref string) (gjson.Result, bool) {
	if ref == "#" {
		return c.root, true
	}
	if !strings.HasPrefix(ref, "#/") {
		return gjson.Result{}, false // remote references are not followed
	}
	cur := c.root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		var next gjson.Result
		found := false
		if cur.IsArray() {
			for i, el := range cur.Array() {
				if strconv.Itoa(i) == tok {
					next, found = el, true
					break
				}
			}
		} else {
			cur.ForEach(func(k, v gjson.Result) bool {
				if k.Str == tok {
					next, found = v, true
					return false
				}
				return true
			})
		}
		if !found {
			return gjson.Result{}, false
		}
		cur = next
	}
	return cur, cur.IsObject()
}

// readTypes reads "type" as a string or a list, upper-cased, with "null"
// taken out as nullable.
func readTypes(v gjson.Result) (types []string, nullable bool) {
	var names []gjson.Result
	switch {
	case v.Type == gjson.String:
		names = []gjson.Result{v}
	case v.IsArray():
		names = v.Array()
	}
	for _, n := range names {
		if n.Type != gjson.String {
			continue
		}
		t := strings.ToUpper(n.Str)
		if t == "NULL" {
			nullable = true
			continue
		}
		types = append(types, t)
	}
	return types, nullable
}

// formatKnown reports whether Gemini's Schema accepts the format for the
// type; it rejects others (uri, email, ...) on some models.
func formatKnown(typ, format string) bool {
	switch typ {
	case "STRING":
		return format == "date-time" || format == "enum"
	case "INTEGER":
		return format == "int32" || format == "int64"
	case "NUMBER":
		return format == "float" || format == "double"
	}
	return false
}

// enumStrings turns enum values into Gemini's string list. ok is false
// when a value is an object or an array, which has no string form.
func enumStrings(v gjson.Result) (enum json.RawMessage, nullable, ok bool) {
	if !v.IsArray() {
		return nil, false, false
	}
	var out []json.RawMessage
	for _, e := range v.Array() {
		switch {
		case e.Type == gjson.String:
			out = append(out, providers.Quote(e.Str))
		case e.Type == gjson.Null:
			nullable = true
		case e.Type == gjson.Number || e.Type == gjson.True || e.Type == gjson.False:
			out = append(out, providers.Quote(e.Raw))
		default:
			return nil, false, false
		}
	}
	if len(out) == 0 {
		return nil, nullable, true
	}
	return providers.JoinArray(out), nullable, true
}

func stringArray(v gjson.Result) (json.RawMessage, bool) {
	if !v.IsArray() {
		return nil, false
	}
	var out []json.RawMessage
	for _, e := range v.Array() {
		if e.Type != gjson.String {
			return nil, false
		}
		out = append(out, providers.Quote(e.Str))
	}
	return providers.JoinArray(out), true
}

func isNullSchema(s gjson.Result) bool {
	only := true
	null := false
	s.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "type" && v.Type == gjson.String && v.Str == "null" {
			null = true
			return true
		}
		only = false
		return false
	})
	return null && only
}

// joinObjects returns a's members, then b's that a lacks.
func joinObjects(a, b gjson.Result) gjson.Result {
	var w objectWriter
	seen := map[string]bool{}
	add := func(k, v gjson.Result) bool {
		if !seen[k.Str] {
			seen[k.Str] = true
			w.field(k.Str, []byte(v.Raw))
		}
		return true
	}
	a.ForEach(add)
	b.ForEach(add)
	return gjson.ParseBytes(w.bytes())
}

// joinStrings returns the strings of a, then those of b that a lacks.
func joinStrings(a, b gjson.Result) gjson.Result {
	seen := map[string]bool{}
	var out []json.RawMessage
	for _, e := range append(a.Array(), b.Array()...) {
		if e.Type == gjson.String && !seen[e.Str] {
			seen[e.Str] = true
			out = append(out, providers.Quote(e.Str))
		}
	}
	return gjson.ParseBytes(providers.JoinArray(out))
}

func joinArray(items []gjson.Result) gjson.Result {
	raws := make([]json.RawMessage, len(items))
	for i, it := range items {
		raws[i] = json.RawMessage(it.Raw)
	}
	return gjson.ParseBytes(providers.JoinArray(raws))
}

// objectWriter builds a JSON object member by member, in order.
type objectWriter struct {
	buf bytes.Buffer
}

func (w *objectWriter) field(key string, value []byte) {
	if w.buf.Len() == 0 {
		w.buf.WriteByte('{')
	} else {
		w.buf.WriteByte(',')
	}
	w.buf.Write(providers.Quote(key))
	w.buf.WriteByte(':')
	w.buf.Write(value)
}

func (w *objectWriter) bytes() []byte {
	if w.buf.Len() == 0 {
		return []byte(`{}`)
	}
	return append(w.buf.Bytes(), '}')
}
