package providers

import (
	"encoding/json"
	"testing"
)

func TestObject(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name   string
		fields []Field
		want   string
	}{
		{"empty", nil, `{}`},
		{"in order", []Field{{"b", raw(`1`)}, {"a", raw(`"x"`)}}, `{"b":1,"a":"x"}`},
		{"nil values left out, first included", []Field{{"a", nil}, {"b", raw(`[]`)}, {"c", nil}, {"d", raw(`{"e":null}`)}}, `{"b":[],"d":{"e":null}}`},
		{"all nil", []Field{{"a", nil}}, `{}`},
	}
	for _, tt := range tests {
		got := Object(tt.fields...)
		if string(got) != tt.want {
			t.Errorf("%s: Object = %s, want %s", tt.name, got, tt.want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: %s is not valid JSON", tt.name, got)
		}
	}
}
