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
		{"in order", []Field{{Key: "b", Value: raw(`1`)}, {Key: "a", Value: raw(`"x"`)}}, `{"b":1,"a":"x"}`},
		{"nil values left out, first included", []Field{{Key: "a"}, {Key: "b", Value: raw(`[]`)}, {Key: "c"}, {Key: "d", Value: raw(`{"e":null}`)}}, `{"b":[],"d":{"e":null}}`},
		{"all nil", []Field{{Key: "a"}}, `{}`},
		{"an array field", []Field{{Key: "m", Value: raw(`"x"`)}, ArrayField("messages", []json.RawMessage{raw(`{"a":1}`), raw(`[2]`), raw(`"3"`)})}, `{"m":"x","messages":[{"a":1},[2],"3"]}`},
		{"an array field first", []Field{ArrayField("messages", []json.RawMessage{raw(`1`)}), {Key: "z", Value: raw(`true`)}}, `{"messages":[1],"z":true}`},
		{"an empty array field is written", []Field{ArrayField("messages", nil), {Key: "a"}}, `{"messages":[]}`},
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
