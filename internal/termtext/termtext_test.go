package termtext

import (
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
