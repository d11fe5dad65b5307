package textproto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// param is one top-level parameter of a tool's JSON Schema.
type param struct {
	name     string
	types    []string // JSON Schema type names; empty accepts anything
	required bool
	desc     string
}

// schema is what the parser needs of a tool's parameters: their order,
// which are required and their types. Deeper validation is the tool
// registry's job; this catches what a text-protocol model gets wrong most.
type schema struct {
	params []param
}

func readSchema(raw json.RawMessage) schema {
	var s schema
	doc := gjson.ParseBytes(bytes.TrimSpace(raw))
	if !doc.IsObject() {
		return s
	}
	required := map[string]bool{}
	for _, r := range doc.Get("required").Array() {
		required[r.String()] = true
	}
	doc.Get("properties").ForEach(func(k, v gjson.Result) bool {
		p := param{name: k.String(), required: required[k.String()], desc: v.Get("description").String()}
		switch t := v.Get("type"); {
		case t.Type == gjson.String:
			p.types = []string{t.String()}
		case t.IsArray():
			for _, x := range t.Array() {
				p.types = append(p.types, x.String())
			}
		}
		s.params = append(s.params, p)
		return true
	})
	// A required name without a property entry is still required.
	for _, r := range doc.Get("required").Array() {
		if s.find(r.String()) == nil {
			s.params = append(s.params, param{name: r.String(), required: true})
		}
	}
	return s
}

func (s schema) find(name string) *param {
	for i := range s.params {
		if s.params[i].name == name {
			return &s.params[i]
		}
	}
	return nil
}

// check reports the first problem with args, a JSON object already known
// to be valid: a missing required parameter or a value of the wrong type.
func (s schema) check(tool string, args gjson.Result) error {
	present := map[string]gjson.Result{}
	args.ForEach(func(k, v gjson.Result) bool {
		present[k.String()] = v
		return true
	})
	for _, p := range s.params {
		v, ok := present[p.name]
		if !ok {
			if p.required {
				return fmt.Errorf("%s: missing required parameter %q", tool, p.name)
			}
			continue
		}
		if len(p.types) > 0 && !slices.ContainsFunc(p.types, func(t string) bool { return isKind(v, t) }) {
			return fmt.Errorf("%s: parameter %q must be %s, got %s", tool, p.name, typeNames(p.types), describe(v))
		}
	}
	return nil
}

// isKind reports whether a JSON value has a JSON Schema type.
func isKind(v gjson.Result, typ string) bool {
	switch typ {
	case "string":
		return v.Type == gjson.String
	case "integer":
		return v.Type == gjson.Number && v.Num == math.Trunc(v.Num) // JSON Schema counts 2.0 as an integer
	case "number":
		return v.Type == gjson.Number
	case "boolean":
		return v.Type == gjson.True || v.Type == gjson.False
	case "null":
		return v.Type == gjson.Null
	case "array":
		return v.IsArray()
	case "object":
		return v.IsObject()
	}
	return true // a type this parser does not know is left to the registry
}

// describe names a value's JSON kind with a short excerpt, for errors.
func describe(v gjson.Result) string {
	kind := "a JSON value"
	switch {
	case v.Type == gjson.String:
		kind = "a string"
	case v.Type == gjson.Number:
		kind = "a number"
	case v.Type == gjson.True || v.Type == gjson.False:
		kind = "a boolean"
	case v.Type == gjson.Null:
		return "null"
	case v.IsArray():
		kind = "an array"
	case v.IsObject():
		kind = "an object"
	}
	raw := v.Raw
	if len(raw) > 40 {
		raw = raw[:40] + "…"
	}
	return kind + " " + raw
}

// coerce turns a word of text (a markdown argument, an XML parameter) into
// a JSON value of the parameter's type. A parameter of unknown type gets a
// string.
func coerce(tool string, p *param, word string) (json.RawMessage, error) {
	types := p.types
	if len(types) == 0 || slices.Contains(types, "string") {
		return providers.Quote(word), nil
	}
	w := strings.TrimSpace(word)
	for _, t := range types {
		switch t {
		case "integer":
			if n, err := strconv.ParseInt(w, 10, 64); err == nil {
				return json.RawMessage(strconv.FormatInt(n, 10)), nil // "007" and "+5" are not JSON
			}
		case "number":
			if f, err := strconv.ParseFloat(w, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64)), nil
			}
		case "boolean":
			switch strings.ToLower(w) {
			case "true":
				return json.RawMessage("true"), nil
			case "false":
				return json.RawMessage("false"), nil
			}
		case "null":
			if w == "null" {
				return json.RawMessage("null"), nil
			}
		case "array", "object":
			v := gjson.Parse(w)
			if gjson.Valid(w) && (t == "array" && v.IsArray() || t == "object" && v.IsObject()) {
				return json.RawMessage(w), nil
			}
		}
	}
	return nil, fmt.Errorf("%s: parameter %q must be %s, got %q", tool, p.name, typeNames(types), shortText(word, 40))
}

// typeNames reads JSON Schema types as English: "an integer or null".
func typeNames(types []string) string {
	names := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "integer", "array", "object":
			names[i] = "an " + t
		case "null":
			names[i] = t
		default:
			names[i] = "a " + t
		}
	}
	return strings.Join(names, " or ")
}

func shortText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// object renders ordered key/value pairs as one JSON object.
type object struct {
	keys []string
	vals []json.RawMessage
}

func (o *object) set(k string, v json.RawMessage) {
	if i := slices.Index(o.keys, k); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

func (o *object) has(k string) bool { return slices.Contains(o.keys, k) }

func (o *object) json() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(providers.Quote(k))
		b.WriteByte(':')
		b.Write(o.vals[i])
	}
	b.WriteByte('}')
	return b.String()
}
