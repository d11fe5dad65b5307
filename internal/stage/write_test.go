package stage

import (
	"bytes"
	"testing"
)

// Each value is one line, or one indented block, and one newline: what
// follows the value in its input (an encoder's newline) is not kept.
func TestWriteJSONEndsInOneNewline(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw    string
		pretty bool
		want   string
	}{
		{"{\"a\": 1}\n", true, "{\n  \"a\": 1\n}\n"},
		{"{\"a\": 1}\n\n \t", true, "{\n  \"a\": 1\n}\n"},
		{"{\"a\": 1}", true, "{\n  \"a\": 1\n}\n"},
		{"{\"a\": 1}\n", false, "{\"a\":1}\n"},
		{"[1, 2]", false, "[1,2]\n"},
	} {
		var out bytes.Buffer
		if err := WriteJSON(&out, tt.pretty, []byte(tt.raw)); err != nil {
			t.Fatalf("%q: %v", tt.raw, err)
		}
		if out.String() != tt.want {
			t.Errorf("%q (pretty %v): %q, want %q", tt.raw, tt.pretty, out.String(), tt.want)
		}
	}
	var out bytes.Buffer
	if err := WriteValue(&out, true, map[string]string{"a": "<b>"}); err != nil || out.String() != "{\n  \"a\": \"<b>\"\n}\n" {
		t.Errorf("WriteValue: %q, %v", out.String(), err)
	}
}
