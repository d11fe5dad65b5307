package providers

import (
	"bytes"
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

func TestFillArray(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	items := []json.RawMessage{raw(`{"role":"user","content":"[]"}`), raw(`[1]`)}
	tests := []struct {
		name, doc, path string
		items           []json.RawMessage
		want            string // "" for an error
	}{
		{"between fields", `{"model":"m","messages":[],"stream":true}`, "messages", items, `{"model":"m","messages":[{"role":"user","content":"[]"},[1]],"stream":true}`},
		{"last field", `{"model":"m","input":[]}`, "input", items, `{"model":"m","input":[{"role":"user","content":"[]"},[1]]}`},
		{"no items", `{"input":[]}`, "input", nil, `{"input":[]}`},
		{"a nested path", `{"a":{"b":[]},"c":[]}`, "a.b", items[1:], `{"a":{"b":[[1]]},"c":[]}`},
		{"not empty", `{"input":[1]}`, "input", items, ""},
		{"not an array", `{"input":"[]"}`, "input", items, ""},
		{"missing", `{"model":"m"}`, "input", items, ""},
	}
	for _, tt := range tests {
		got, err := FillArray([]byte(tt.doc), tt.path, tt.items)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("%s: FillArray = %s, want an error", tt.name, got)
		case tt.want != "" && (err != nil || string(got) != tt.want):
			t.Errorf("%s: FillArray = %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
}

// FuzzQuote holds Quote, which copies plain ASCII between quotes, to
// encoding/json's encoder without HTML escaping, which writes the rest.
func FuzzQuote(f *testing.F) {
	for _, seed := range []string{"", "openai", "https://x/v1?a=b&c=<d>", "a\"b", `a\b`, "tab\there", "line\n",
		"\x7f", "é", "\u2028", "\xff", "~ !#$%&'()*+,-./:;<=>?@[]^_`{|}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := Quote(s); !bytes.Equal(got, bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Errorf("Quote(%q) = %s, encoding/json writes %s", s, got, want.Bytes())
		}
		if got := AppendQuote([]byte("x:"), s); !bytes.Equal(got, append([]byte("x:"), Quote(s)...)) {
			t.Errorf("AppendQuote(x:, %q) = %s, want x:%s", s, got, Quote(s))
		}
	})
}
