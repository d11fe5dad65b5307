package jsonpos

import (
	"errors"
	"strings"
	"testing"
)

func TestFaultsAreLocated(t *testing.T) {
	t.Parallel()
	var calls []struct {
		Name string `json:"name"`
	}
	tests := []struct {
		name string
		err  error
		want string // "" for no fault
	}{
		{"valid", Check("stdin", []byte(`{"a": [1, 2]}`)), ""},
		{"empty", Check("stdin", []byte(" \n")), "stdin is empty: expected JSON"},
		{"syntax on line 2", Check("stdin", []byte("{\n  \"a\": ,\n}")), "stdin: invalid JSON at line 2, column 8: "},
		{"cut off", Check("in.json", []byte(`{"a":`)), "in.json: invalid JSON at line 1, column 6: unexpected end"},
		{"wrong type", Decode("stdin", []byte("[\n {\"name\": 5}]"), &calls), "stdin: line 2, column 11: name is a JSON number, expected a string"},
		{"caller's fault", At("stdin", []byte("[\n\n  {}]"), 5, "entry %d: empty", 0), "stdin: line 3, column 3: entry 0: empty"},
		{"ndjson line 3", CheckStream("s", []byte("{}\n{}\n{x}\n"), true), "s: invalid JSON in the stream at line 3, column 2: "},
		{"sse data column", CheckStream("s", []byte("data: {}\n\nevent: e\ndata: {\"a\":}\n\ndata: [DONE]\n"), false), "s: invalid JSON in the stream at line 4, column 12: "},
		{"sse done only", CheckStream("s", []byte("data: [DONE]\n\n"), false), ""},
		// Valid JSON, though no float64 holds the number.
		{"huge number", Check("stdin", []byte("2"+strings.Repeat("0", 400))), ""},
		{"huge number in a stream", CheckStream("s", []byte(`data: {"n":1`+strings.Repeat("0", 400)+"}\n\n"), false), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.want == "" {
				if tt.err != nil {
					t.Fatalf("fault %v in valid input", tt.err)
				}
				return
			}
			var e *Error
			if !errors.As(tt.err, &e) || !strings.HasPrefix(tt.err.Error(), tt.want) {
				t.Errorf("got %v, want a located fault starting %q", tt.err, tt.want)
			}
		})
	}
}
