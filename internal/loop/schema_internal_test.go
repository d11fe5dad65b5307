package loop

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCompileSchema(t *testing.T) {
	good := []string{
		`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":{"type":"integer"}}`,
		`{"$defs":{"n":{"type":"integer"}},"type":"object","properties":{"n":{"$ref":"#/$defs/n"}}}`,
		`true`,
	}
	for _, s := range good {
		if _, err := CompileSchema(json.RawMessage(s)); err != nil {
			t.Errorf("CompileSchema(%s): %v", s, err)
		}
	}
	bad := []struct{ schema, want string }{
		{`{"type":`, "not valid JSON"},
		{`[1,2]`, "is an object"},
		{`"string"`, "is an object"},
		{`{"type":"strin"}`, "strin"},
		{`{"type":"object","required":"city"}`, "required"},
		{`{"$ref":"https://example.com/other.json"}`, "only references inside the schema"},
		{`{"$ref":"other.json"}`, "only references inside the schema"},
	}
	for _, tt := range bad {
		_, err := CompileSchema(json.RawMessage(tt.schema))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CompileSchema(%s) = %v, want an error mentioning %q", tt.schema, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("CompileSchema(%s): error spans lines: %q", tt.schema, err)
		}
	}
}

func TestCheck(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"pop":{"type":"integer","minimum":0}},"required":["city","pop"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		answer string
		want   string   // the JSON returned when valid
		errs   []string // substrings of the problems when not
	}{
		{answer: `{"city":"Oslo","pop":700000}`, want: `{"city":"Oslo","pop":700000}`},
		{answer: "  \n{\"city\":\"Oslo\",\"pop\":1}\n", want: `{"city":"Oslo","pop":1}`},
		{answer: "```json\n{\"city\":\"Oslo\",\"pop\":1}\n```", want: `{"city":"Oslo","pop":1}`},
		{answer: "```\n{\"city\":\"Oslo\",\"pop\":1}\n```", want: `{"city":"Oslo","pop":1}`},
		{answer: "", errs: []string{"empty"}},
		{answer: "Oslo has 700000 people.", errs: []string{"not one JSON value"}},
		{answer: `{"city":"Oslo","pop":1} and more`, errs: []string{"not one JSON value"}},
		{answer: `{"city":"Oslo"}`, errs: []string{`at /: required: missing properties: ["pop"]`}},
		{answer: `{"city":"Oslo","pop":"many"}`, errs: []string{`at /properties/pop: type: many has type "string", want "integer"`}},
		{answer: `{"city":"Oslo","pop":-1}`, errs: []string{"at /properties/pop: minimum:"}},
		{answer: `{"city":"Oslo","pop":1,"x":true}`, errs: []string{`additional properties ["x"]`}},
	}
	for _, tt := range tests {
		got, err := s.Check(tt.answer)
		if tt.errs == nil {
			if err != nil || got != tt.want {
				t.Errorf("Check(%q) = %q, %v; want %q", tt.answer, got, err, tt.want)
			}
			continue
		}
		var serr *SchemaError
		if !errors.As(err, &serr) {
			t.Errorf("Check(%q) = %q, %v; want a *SchemaError", tt.answer, got, err)
			continue
		}
		all := strings.Join(serr.Problems, "\n")
		for _, want := range tt.errs {
			if !strings.Contains(all, want) {
				t.Errorf("Check(%q) problems:\n%s\nlack %q", tt.answer, all, want)
			}
		}
	}
}

func TestUnfence(t *testing.T) {
	tests := map[string]string{
		"{}":                    "{}",
		"```json\n[1]\n```":     "[1]",
		"```JSON\r\n[1]\r\n```": "[1]",
		"```[1]```":             "```[1]```", // no newline: not a fence we understand
		"``` {\"a\":1}\n```":    "``` {\"a\":1}\n```",
		"text ```json\n1\n```":  "text ```json\n1\n```",
	}
	for in, want := range tests {
		if got := unfence(in); got != want {
			t.Errorf("unfence(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSchemaRetryText(t *testing.T) {
	got := schemaRetryText(&SchemaError{Problems: []string{"at /pop: got string, want integer"}})
	if !strings.Contains(got, "- at /pop: got string, want integer\n") || !strings.Contains(got, "only one JSON value") {
		t.Errorf("retry text = %q", got)
	}
}
