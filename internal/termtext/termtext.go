// Package termtext makes text that a model, a provider or a file wrote
// safe to show on a terminal: what it shows is what the text says, whole.
package termtext

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Safe shows text a model wrote, whole, in a form that cannot
// redraw the terminal or hide part of itself: control characters
// (escape sequences, carriage returns), format characters (bidi
// overrides, zero-width ones), line separators and bytes that are not
// UTF-8 are written as escapes, and a long run of spaces, which could push
// the rest out of sight, as its count. Nothing is cut: the terminal wraps
// a long command.
func Safe(s string) string {
	var b strings.Builder
	spaces := 0
	flush := func() {
		if spaces > 8 {
			fmt.Fprintf(&b, "⟨%d spaces⟩", spaces)
		} else {
			b.WriteString(strings.Repeat(" ", spaces))
		}
		spaces = 0
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == ' ' {
			spaces++
			continue
		}
		flush()
		b.Write(appendRune(nil, r, size, s[i-1], false))
	}
	flush()
	return b.String()
}

// Dangerous reports whether a rune can drive a terminal or hide text:
// C0 and C1 controls (escape sequences start with ESC or CSI, U+009B),
// DEL, format characters (the bidi overrides and isolates U+202A–U+202E
// and U+2066–U+2069, zero-width ones) and the line and paragraph
// separators. Every printing path escapes exactly these.
func Dangerous(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// appendRune appends one decoded rune as a terminal may show it: a byte
// that is not UTF-8 (size 1, RuneError) as \xHH, a Dangerous rune as an
// escape, anything else as it is. With keepLines, newline and tab pass.
func appendRune(out []byte, r rune, size int, first byte, keepLines bool) []byte {
	switch {
	case r == utf8.RuneError && size == 1:
		return fmt.Appendf(out, `\x%02x`, first)
	case keepLines && (r == '\n' || r == '\t'):
		return append(out, byte(r))
	case r == '\n':
		return append(out, `\n`...)
	case r == '\t':
		return append(out, `\t`...)
	case r == '\r':
		return append(out, `\r`...)
	case Dangerous(r):
		return fmt.Appendf(out, `\u%04x`, r)
	}
	return utf8.AppendRune(out, r)
}

// SafeLines is Safe for text of several lines (a prompt, an answer): its
// line breaks stay line breaks.
func SafeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Safe(l)
	}
	return strings.Join(lines, "\n")
}

// Agree is the word that agrees with n: one for 1, else many ("it is",
// "they are").
func Agree(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Plural is n with the noun that agrees with it: "1 step", "3 steps".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Shorten keeps text to one line, its runs of white space made one space:
// a line of more than n runes is cut to n, with "…" after them.
func Shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// FirstLine is the first line of s, trimmed, with " …" when more lines
// follow: a long error in one line of a list.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

// Writer passes text to a terminal escaped as Safe escapes it, but with
// line breaks and tabs kept: a model's or a provider's text streamed to a
// terminal cannot drive it (an escape sequence can set the clipboard, OSC
// 52, or rewrite what is on the screen) nor reorder it (a bidi override).
// A character arriving split across two writes is held until it is whole.
type Writer struct {
	W    io.Writer
	held []byte // the start of a character split across writes
}

func (w *Writer) Write(p []byte) (int, error) {
	in := append(w.held, p...)
	w.held = nil
	var out []byte
	for i := 0; i < len(in); {
		if !utf8.FullRune(in[i:]) {
			w.held = append([]byte(nil), in[i:]...) // wait for the rest
			break
		}
		r, size := utf8.DecodeRune(in[i:])
		out = appendRune(out, r, size, in[i], true)
		i += size
	}
	if _, err := w.W.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held: the start of a character that never came
// whole, escaped.
func (w *Writer) Flush() error {
	if len(w.held) == 0 {
		return nil
	}
	var out []byte
	for _, c := range w.held {
		out = appendRune(out, utf8.RuneError, 1, c, true)
	}
	w.held = nil
	_, err := w.W.Write(out)
	return err
}

// JSON makes JSON text safe for a terminal without changing what it
// says: every Dangerous rune that encoding/json leaves raw (C1 controls,
// bidi overrides, zero-width characters) becomes its \u escape, and a
// byte that is not UTF-8 becomes \ufffd, as a JSON reader would take it.
// Valid JSON stays valid JSON with the same value.
func JSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case r >= utf8.RuneSelf && Dangerous(r):
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}
