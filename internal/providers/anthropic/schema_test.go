package anthropic

import (
	"encoding/json"
	"testing"
)

func TestPredatesStructuredOutput(t *testing.T) {
	tests := []struct {
		model string
		old   bool
	}{
		{"claude-3-5-sonnet-20241022", true},
		{"claude-3-7-sonnet-latest", true},
		{"claude-2.1", true},
		{"claude-instant-1.2", true},
		{"claude-opus-4-20250514", true},
		{"claude-sonnet-4-20250514", true},
		{"claude-opus-4-0", true},
		{"claude-opus-4-1", true},
		{"claude-opus-4-1-20250805", true},
		{"claude-sonnet-4", true},
		{"claude-sonnet-4-5", false},
		{"claude-sonnet-4-5-20250929", false},
		{"claude-opus-4-5-20251101", false},
		{"claude-opus-4-6", false},
		{"claude-sonnet-4-6", false},
		{"claude-haiku-4-5", false},
		{"claude-opus-4-7", false},
		{"claude-sonnet-5", false},
		{"claude-mythos-preview", false},
		{"some-proxy-model", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := predatesStructuredOutput(tt.model); got != tt.old {
			t.Errorf("predatesStructuredOutput(%q) = %v, want %v", tt.model, got, tt.old)
		}
	}
}

func TestNativeSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string // "" when the schema must go into the prompt instead
	}{
		{"object closed",
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
			`{"additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}`},
		{"nested objects closed, in properties, items, anyOf and $defs",
			`{"type":"object","properties":{"list":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}}}},"either":{"anyOf":[{"type":"object","properties":{}},{"type":"null"}]},"ref":{"$ref":"#/$defs/p"}},"$defs":{"p":{"type":"object","properties":{"n":{"type":"number"}}}}}`,
			`{"$defs":{"p":{"additionalProperties":false,"properties":{"n":{"type":"number"}},"type":"object"}},"additionalProperties":false,"properties":{"either":{"anyOf":[{"additionalProperties":false,"properties":{},"type":"object"},{"type":"null"}]},"list":{"items":{"additionalProperties":false,"properties":{"x":{"type":"integer"}},"type":"object"},"type":"array"},"ref":{"$ref":"#/$defs/p"}},"type":"object"}`},
		{"limits the decoder does not enforce are dropped",
			`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":9,"multipleOf":2},"s":{"type":"string","minLength":2,"maxLength":5,"pattern":"^a"},"l":{"type":"array","minItems":3,"maxItems":4,"uniqueItems":true},"m":{"type":"array","minItems":1}}}`,
			`{"additionalProperties":false,"properties":{"l":{"type":"array"},"m":{"minItems":1,"type":"array"},"n":{"type":"integer"},"s":{"pattern":"^a","type":"string"}},"type":"object"}`},
		{"explicitly closed object kept", `{"type":"object","additionalProperties":false}`, `{"additionalProperties":false,"type":"object"}`},
		{"type list with object", `{"type":["object","null"]}`, `{"additionalProperties":false,"type":["object","null"]}`},
		{"large numbers kept exactly", `{"type":"integer","enum":[12345678901234567890]}`, `{"enum":[12345678901234567890],"type":"integer"}`},
		{"open object", `{"type":"object","additionalProperties":true}`, ""},
		{"map of numbers", `{"type":"object","additionalProperties":{"type":"number"}}`, ""},
		{"open object deep inside", `{"type":"array","items":{"type":"object","additionalProperties":{}}}`, ""},
		{"not an object schema", `["a"]`, ""},
		{"not JSON", `{`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := nativeSchema("claude-sonnet-4-5", []byte(tt.schema))
			if tt.want == "" {
				if ok {
					t.Fatalf("nativeSchema = %s, want the prompt instead", got)
				}
				return
			}
			if !ok || string(got) != tt.want {
				t.Fatalf("nativeSchema = %s, %v\nwant %s", got, ok, tt.want)
			}
		})
	}
}

// A schema nested deeper than maxSchemaDepth goes into the prompt rather
// than recursing without bound.
func TestNativeSchemaDepth(t *testing.T) {
	s := `{"type":"string"}`
	for range maxSchemaDepth + 2 {
		s = `{"type":"array","items":` + s + `}`
	}
	if !json.Valid([]byte(s)) {
		t.Fatal("bad test schema")
	}
	if got, ok := nativeSchema("claude-sonnet-4-5", []byte(s)); ok {
		t.Fatalf("nativeSchema accepted a schema %d deep: %.80s…", maxSchemaDepth+2, got)
	}
}
