package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Anthropic's structured output (output_config.format, a json_schema)
// decodes under the schema, and so accepts only what its decoder can
// enforce: every object closed with additionalProperties:false, and no
// numeric, length or count limits. ask validates every answer against the
// user's whole schema itself, so dropping those limits from what is sent
// loses nothing: a violation is caught locally and sent back to correct.

// unenforced are the keywords the decoder does not take; they are left out
// of the schema sent, and checked locally instead.
var unenforced = map[string]bool{
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minLength": true, "maxLength": true,
	"maxItems": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true,
}

// subschemaMaps and subschemaLists name the keywords whose values hold
// subschemas, so that the walk reaches every nested object.
var (
	subschemaMaps  = []string{"properties", "$defs", "definitions", "patternProperties"}
	subschemaOnes  = []string{"items", "not", "if", "then", "else", "contains", "additionalItems"}
	subschemaLists = []string{"anyOf", "oneOf", "allOf", "prefixItems"}
)

// predatesStructuredOutput reports whether model is a Claude model from
// before structured output (Claude 2 and 3, Opus and Sonnet 4.0 and 4.1,
// with or without a date suffix): for them the schema goes into the system
// prompt instead. Newer and unknown models get the native field.
func predatesStructuredOutput(model string) bool {
	m, ok := strings.CutPrefix(model, "claude-")
	if !ok {
		return false
	}
	for _, old := range []string{"2", "3", "instant"} {
		if strings.HasPrefix(m, old) {
			return true
		}
	}
	for _, family := range []string{"opus-4", "sonnet-4"} {
		rest, ok := strings.CutPrefix(m, family)
		if !ok {
			continue
		}
		if i := len(rest) - 9; i >= 0 && rest[i] == '-' && allDigits(rest[i+1:]) {
			rest = rest[:i] // a snapshot date, claude-opus-4-1-20250805
		}
		return rest == "" || rest == "-0" || rest == "-1"
	}
	return false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// nativeSchema returns the schema as output_config.format accepts it, or
// false when the model predates structured output or the schema needs
// something the decoder cannot enforce (an open object, such as a map of
// strings to numbers, which additionalProperties:false would forbid).
func nativeSchema(model string, schema []byte) (json.RawMessage, bool) {
	if predatesStructuredOutput(model) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, false
	}
	root, ok := doc.(map[string]any)
	if !ok || !closeObjects(root, 0) {
		return nil, false
	}
	out, err := json.Marshal(root)
	if err != nil {
		return nil, false
	}
	return out, true
}

// maxSchemaDepth bounds the walk, so that a pathological schema cannot
// exhaust the stack; deeper schemas are sent as instructions.
const maxSchemaDepth = 64

// closeObjects rewrites one schema in place: unenforced keywords removed,
// objects closed. It reports false for a schema that cannot be sent.
func closeObjects(s map[string]any, depth int) bool {
	if depth > maxSchemaDepth {
		return false
	}
	for k := range s {
		if unenforced[k] {
			delete(s, k)
		}
	}
	// minItems is enforced only as 0 or 1.
	if n, ok := s["minItems"].(json.Number); ok && n.String() != "0" && n.String() != "1" {
		delete(s, "minItems")
	}
	if isObjectSchema(s) {
		switch ap := s["additionalProperties"].(type) {
		case nil:
			s["additionalProperties"] = false
		case bool:
			if ap {
				return false
			}
		default:
			return false // a map's value schema: the object must stay open
		}
	}
	walk := func(v any) bool {
		sub, ok := v.(map[string]any)
		return !ok || closeObjects(sub, depth+1) // true and false schemas pass as they are
	}
	for _, k := range subschemaMaps {
		if m, ok := s[k].(map[string]any); ok {
			for _, v := range m {
				if !walk(v) {
					return false
				}
			}
		}
	}
	for _, k := range subschemaOnes {
		if v, ok := s[k]; ok && !walk(v) {
			return false
		}
	}
	for _, k := range subschemaLists {
		if list, ok := s[k].([]any); ok {
			for _, v := range list {
				if !walk(v) {
					return false
				}
			}
		}
	}
	// items as a list of schemas (draft 4 tuples) is walked too.
	if list, ok := s["items"].([]any); ok {
		for _, v := range list {
			if !walk(v) {
				return false
			}
		}
	}
	return true
}

// isObjectSchema reports whether s describes an object: by its type, or by
// declaring properties.
func isObjectSchema(s map[string]any) bool {
	if _, ok := s["properties"]; ok {
		return true
	}
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case []any:
		for _, v := range t {
			if v == "object" {
				return true
			}
		}
	}
	return false
}
