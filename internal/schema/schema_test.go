package schema

import (
	"strings"
	"testing"
)

func TestCompileRefuses(t *testing.T) {
	t.Parallel()
	bad := []struct{ schema, want string }{
		{`{"type":`, "not valid JSON"},
		{`{} {}`, "more than one JSON value"},
		{`5`, "is an object"},
		{`[]`, "is an object"},
		{`{"$schema":"http://json-schema.org/draft-04/schema#"}`, "only draft 2020-12"},
		{`{"type":"strin"}`, `at /type: "strin" is not a JSON type`},
		{`{"properties":{"a":{"type":["string","integr"]}}}`, `at /properties/a/type: "integr"`},
		{`{"items":[{"type":"string"}]}`, `at /items: an array of schemas is draft-07`},
		{`{"required":"x"}`, `"required" must be an array, got string`},
		{`{"properties":{"a":{"minimum":"5"}}}`, `"minimum" must be a number, got string`},
		{`{"pattern":"("}`, "pattern: error parsing regexp"},
		{`{"$ref":"#/$defs/nope"}`, "nope"},
		{`{"$ref":"file:///etc/passwd"}`, "loading file:///etc/passwd: only references inside the schema are followed"},
		{`{"$ref":"other.json"}`, "loading other.json: only references inside the schema"},
		{`{"$id":"http://example.com/a","properties":{"b":{"$ref":"http://example.com/b"}}}`, "nothing is loaded from files or the network"},
		{`{"$ref":"https://json-schema.org/draft/2020-12/schema"}`, "nothing is loaded"},
	}
	for _, tt := range bad {
		_, err := Compile([]byte(tt.schema))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Compile(%s) = %v, want one line mentioning %q", tt.schema, err, tt.want)
		}
	}
	for _, good := range []string{
		`true`, `false`, `{}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}]}`,
		`{"$defs":{"n":{"type":"integer"}},"properties":{"n":{"$ref":"#/$defs/n"}}}`,
		`{"type":["string","null"],"x-unknown":1}`,
	} {
		if _, err := Compile([]byte(good)); err != nil {
			t.Errorf("Compile(%s): %v", good, err)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(`{"type":"object","properties":{"n":{"$ref":"#/$defs/n"},"s":{"type":"string"}},
		"required":["s"],"additionalProperties":false,"$defs":{"n":{"type":"integer","minimum":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ value, want string }{
		{`{"s":"a","n":2}`, ""},
		{`{"s":"a","n":2.0}`, ""},
		{`{}`, `at /: required: missing properties: ["s"]`},
		{`{"s":1}`, `at /properties/s: type: 1 has type "integer", want "string"`},
		{`{"s":"a","n":0}`, `at /$defs/n: minimum:`},
		{`{"s":"a","x":0}`, `at /: unexpected additional properties ["x"]`},
	}
	for _, tt := range tests {
		v, err := Decode([]byte(tt.value))
		if err != nil {
			t.Fatal(err)
		}
		err = s.Validate(v)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)) {
			t.Errorf("Validate(%s) = %v, want %q", tt.value, err, tt.want)
		}
		if _, ok := err.(*Violation); err != nil && !ok {
			t.Errorf("Validate(%s) returned a %T, want a *Violation", tt.value, err)
		}
	}
}
