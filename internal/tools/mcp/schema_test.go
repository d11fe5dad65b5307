package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCleanSchema(t *testing.T) {
	tests := []struct {
		name     string
		in       any
		want     string
		wantNote string
	}{
		{name: "what the reference servers send",
			in:   json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"path":{"type":"string","format":"uri","default":"."},"n":{"type":"number","minimum":0,"maximum":9}},"required":["path"],"additionalProperties":false}`),
			want: `{"additionalProperties":false,"properties":{"n":{"maximum":9,"minimum":0,"type":"number"},"path":{"default":".","format":"uri","type":"string"}},"required":["path"],"type":"object"}`},
		{name: "decoded by the SDK as a map", in: map[string]any{"type": "object", "$id": "urn:x", "properties": map[string]any{"a": map[string]any{"type": "integer"}}},
			want: `{"properties":{"a":{"type":"integer"}},"type":"object"}`},
		{name: "$comment goes everywhere but as a property name",
			in:   json.RawMessage(`{"type":"object","$comment":"c","properties":{"$comment":{"type":"string","$comment":"inner"},"list":{"type":"array","items":{"$comment":"x","type":"string"}}},"$defs":{"d":{"$comment":"y","type":"string"}}}`),
			want: `{"$defs":{"d":{"type":"string"}},"properties":{"$comment":{"type":"string"},"list":{"items":{"type":"string"},"type":"array"}},"type":"object"}`},
		{name: "no type", in: json.RawMessage(`{"properties":{"a":{}}}`), want: `{"properties":{"a":{}},"type":"object"}`},
		{name: "no properties", in: json.RawMessage(`{"type":"object"}`), want: `{"properties":{},"type":"object"}`},
		{name: "big numbers kept exactly", in: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer","maximum":9007199254740993}}}`),
			want: `{"properties":{"id":{"maximum":9007199254740993,"type":"integer"}},"type":"object"}`},
		{name: "draft-07 definitions and $ref still compile", in: json.RawMessage(`{"type":"object","definitions":{"p":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/p"}}}`),
			want: `{"definitions":{"p":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/p"}},"type":"object"}`},
		{name: "nil", in: nil, want: emptyObject},
		{name: "not an object", in: json.RawMessage(`["a"]`), want: emptyObject, wantNote: "not a JSON object"},
		{name: "not an object schema", in: json.RawMessage(`{"type":"string"}`), want: emptyObject, wantNote: "has type string, not object"},
		{name: "does not compile", in: json.RawMessage(`{"type":"object","properties":{"a":{"type":"strnig"}}}`), want: emptyObject, wantNote: "not valid JSON Schema"},
		{name: "a $ref to a file is not followed", in: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`), want: emptyObject, wantNote: "not valid JSON Schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, note := cleanSchema(tt.in)
			if string(got) != tt.want {
				t.Errorf("schema =\n%s\nwant\n%s", got, tt.want)
			}
			if (tt.wantNote == "") != (note == "") || !strings.Contains(note, tt.wantNote) {
				t.Errorf("note = %q, want %q", note, tt.wantNote)
			}
			if strings.Contains(note, "\n") {
				t.Errorf("note is not one line: %q", note)
			}
		})
	}
}
