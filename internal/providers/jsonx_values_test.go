package providers

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"
)

// The small values request bodies are written from: nil where a field is
// to be left out, JSON otherwise.
func TestValues(t *testing.T) {
	t.Parallel()
	third, zero := 0.3, 0.0
	tests := []struct {
		name string
		got  json.RawMessage
		want string // "" for nil
	}{
		{"a number", Number(0.3), `0.3`},
		{"a whole number", Number(2), `2`},
		{"a small number, not in e-notation", Number(0.0000001), `0.0000001`},
		{"no number", OptionalNumber(nil), ``},
		{"a number given", OptionalNumber(&third), `0.3`},
		{"zero given is sent", OptionalNumber(&zero), `0`},
		{"an int", Int(-42), `-42`},
		{"true", Bool(true), `true`},
		{"false", Bool(false), `false`},
		{"no string", OptionalString(""), ``},
		{"a string, unescaped <&>", OptionalString("a <b> & \"c\""), `"a <b> & \"c\""`},
		{"an object without values", OptionalObject(Field{Key: "a"}, Field{Key: "b"}), ``},
		{"an object with one", OptionalObject(Field{Key: "a"}, Field{Key: "b", Value: Int(1)}), `{"b":1}`},
		{"an empty array is a value", OptionalObject(ArrayField("a", nil)), `{"a":[]}`},
	}
	for _, tt := range tests {
		switch {
		case tt.want == "" && tt.got != nil:
			t.Errorf("%s: %s, want nil", tt.name, tt.got)
		case tt.want != "" && string(tt.got) != tt.want:
			t.Errorf("%s: %s, want %s", tt.name, tt.got, tt.want)
		}
	}
}

// ReadMembers reads the members asked for in one pass; the first of
// duplicate keys wins, as with gjson.Get, and a missing one stays unset.
func TestReadMembers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc          string
		wantA, wantB string // raw; "" for missing
		wantC        string
	}{
		{`{"a":1,"b":"x","c":[1]}`, `1`, `"x"`, `[1]`},
		{`{"b":{"a":2},"a":3}`, `3`, `{"a":2}`, ``},
		{`{"a":1,"a":2}`, `1`, ``, ``},
		{`{"z":0,"a":null}`, `null`, ``, ``},
		{`{"a\u0062":5}`, ``, ``, ``}, // the key is "ab"
		{`[1,2]`, ``, ``, ``},
	}
	for _, tt := range tests {
		var a, b, c gjson.Result
		ReadMembers(gjson.Parse(tt.doc), Member{"a", &a}, Member{"b", &b}, Member{"c", &c})
		for _, m := range []struct {
			name      string
			got       gjson.Result
			wantRaw   string
			wantExist bool
		}{{"a", a, tt.wantA, tt.wantA != ""}, {"b", b, tt.wantB, tt.wantB != ""}, {"c", c, tt.wantC, tt.wantC != ""}} {
			if m.got.Exists() != m.wantExist || m.got.Raw != m.wantRaw {
				t.Errorf("%s: %s = %q (exists %v), want %q", tt.doc, m.name, m.got.Raw, m.got.Exists(), m.wantRaw)
			}
		}
		if gjson.Get(tt.doc, "a").Raw != a.Raw {
			t.Errorf("%s: a = %q, gjson.Get says %q", tt.doc, a.Raw, gjson.Get(tt.doc, "a").Raw)
		}
	}
}
