package termtext

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// harmful says what in out could drive a terminal or hide text: bytes
// that are not UTF-8, and any Dangerous rune but the line breaks and tabs
// that keepLines allows. "" when out is safe to show.
func harmful(out string, keepLines bool) string {
	if !utf8.ValidString(out) {
		return "invalid UTF-8"
	}
	for _, r := range out {
		if keepLines && (r == '\n' || r == '\t') {
			continue
		}
		if Dangerous(r) {
			return "raw " + string(Safe(string(r)))
		}
	}
	return ""
}

// The seeds are the attacks of issue 37 item 7: OSC 52 and OSC 8, screen
// clears, CSI in its C1 form, DCS, BEL, bidi overrides and isolates,
// zero-width characters, and bytes that are not UTF-8, cut anywhere.
var seeds = []string{
	"copy \x1b]52;c;cm0gLXJmIH4=\x07 now",
	"\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
	"\x1b[2J\x1b[H clear",
	"c1 \xc2\x9b2J csi \xc2\x9d osc",
	"dcs \x1bP1$r\x1b\\ end \x90q\x9c",
	"bidi \u202egnp.exe \u202a\u202b\u202c\u202d \u2066x\u2067\u2068\u2069",
	"zero\u200bwidth \ufeff bom \u2028 ls \u2029 ps",
	"bad \xff\xfe \xe2\x80 cut",
	"bell\a back\b del\x7f cr\r",
}

// FuzzTerminalText feeds escapes, controls and invalid UTF-8 to every
// form of the one escaping function: Safe, SafeLines, the streaming
// Writer (cut at any point, as a stream arrives), and JSON. Nothing
// dangerous may come out, and JSON must still say what it said.
func FuzzTerminalText(f *testing.F) {
	for i, s := range seeds {
		f.Add(s, uint(i))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint) {
		if h := harmful(Safe(s), false); h != "" {
			t.Fatalf("Safe(%q): %s", s, h)
		}
		if h := harmful(SafeLines(s), true); h != "" {
			t.Fatalf("SafeLines(%q): %s", s, h)
		}
		var out strings.Builder
		w := &Writer{W: &out}
		at := int(cut % uint(len(s)+1))
		w.Write([]byte(s[:at]))
		w.Write([]byte(s[at:]))
		w.Flush()
		if h := harmful(out.String(), true); h != "" {
			t.Fatalf("Writer(%q cut at %d) = %q: %s", s, at, out.String(), h)
		}
		j := JSON([]byte(s))
		if !utf8.Valid(j) {
			t.Fatalf("JSON(%q) = %q: invalid UTF-8", s, j)
		}
		if h := harmful(string(bytes.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' ' // ASCII controls are encoding/json's to escape, inside strings
			}
			return r
		}, j)), true); h != "" {
			t.Fatalf("JSON(%q) = %q: %s", s, j, h)
		}
	})
}
