package termtext

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestSafe(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"git status", "git status"},
		{"a" + strings.Repeat(" ", 200) + "b", "a⟨200 spaces⟩b"},
		{"a        b", "a        b"}, // eight spaces are shown as spaces
		{"x\r\x1b[2Ky", `x\r\u001b[2Ky`},
		{"line\nnext\ttab", `line\nnext\ttab`},
		{"\u202egnp.exe", `\u202egnp.exe`},
		{"sep\u2028x", `sep\u2028x`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"naïve café", "naïve café"},
	}
	for _, tt := range tests {
		if got := Safe(tt.in); got != tt.want {
			t.Errorf("Safe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPlural(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 steps"}, {1, "1 step"}, {2, "2 steps"}, {-1, "-1 steps"}} {
		if got := Plural(tc.n, "step", "steps"); got != tc.want {
			t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestShorten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"go test ./...", 80, "go test ./..."},
		{"  two\n\tlines  ", 80, "two lines"},
		{"abcdef", 3, "abc…"},
		{"naïve café", 4, "naïv…"},
		{"abc", 3, "abc"},
		{"", 5, ""},
	}
	for _, tt := range tests {
		if got := Shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"exit status 1":                      "exit status 1",
		"  connect: refused\n  at dial\n":    "connect: refused …",
		"\nfirst after a blank line\nsecond": "first after a blank line …",
		"":                                   "",
	}
	for in, want := range tests {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriterDisarmsTheTerminal: a stream of a model's text cannot set the
// clipboard (OSC 52), clear the screen or move the cursor, in one write or
// split across writes, and keeps its lines and tabs.
func TestWriterDisarmsTheTerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		chunks []string
		want   string
	}{
		{[]string{"fine\n\ttext"}, "fine\n\ttext"},
		{[]string{"copy \x1b]52;c;cm0gLXJmIH4=\x07 now"}, `copy \u001b]52;c;cm0gLXJmIH4=\u0007 now`},
		{[]string{"clear\x1b[2J"}, `clear\u001b[2J`},
		{[]string{"c1 \xc2", "\x9b2J csi"}, `c1 \u009b2J csi`},
		{[]string{"é is \xc3\xa9 and \xc2\xa0 nbsp"}, "é is é and \u00a0 nbsp"},
		{[]string{"over\rwrite"}, `over\rwrite`},
		{[]string{"bidi \u202egnp.exe"}, `bidi \u202egnp.exe`},
		{[]string{"split \xe2\x80", "\xae over"}, `split \u202e over`},
		{[]string{"isolate \u2066x\u2069 bel\a"}, `isolate \u2066x\u2069 bel\u0007`},
		{[]string{"bad \xff\xfe utf-8"}, `bad \xff\xfe utf-8`},
		{[]string{"cut short \xe2\x80"}, `cut short \xe2\x80`},
		{[]string{"dcs \x1bP1$r\x1b\\ end"}, `dcs \u001bP1$r\u001b\ end`},
	}
	for _, tt := range tests {
		var out strings.Builder
		w := &Writer{W: &out}
		for _, c := range tt.chunks {
			if n, err := w.Write([]byte(c)); err != nil || n != len(c) {
				t.Fatalf("Write(%q) = %d, %v", c, n, err)
			}
		}
		w.Flush()
		if out.String() != tt.want {
			t.Errorf("%q: wrote %q, want %q", tt.chunks, out.String(), tt.want)
		}
	}
}

// JSON shown at a terminal keeps its value and loses every character
// that could drive the terminal.
func TestJSON(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"a":"plain é"}`, `{"a":"plain é"}`},
		{"{\"d\":\"c1 \u009b2J bidi \u202e zw \u200b tag \U000e0001\"}", `{"d":"c1 \u009b2J bidi \u202e zw \u200b tag \udb40\udc01"}`},
		{"{\"bad\":\"\xff\"}", `{"bad":"\ufffd"}`},
		{"{\n  \"k\": 1\n}", "{\n  \"k\": 1\n}"},
	}
	for _, tt := range tests {
		got := JSON([]byte(tt.in))
		if string(got) != tt.want {
			t.Errorf("JSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
		var a, b any
		if json.Unmarshal([]byte(tt.in), &a) == nil {
			if err := json.Unmarshal(got, &b); err != nil || !reflect.DeepEqual(a, b) && !strings.Contains(tt.in, "\xff") {
				t.Errorf("JSON(%q) changed the value: %v vs %v (%v)", tt.in, a, b, err)
			}
		}
	}
}
