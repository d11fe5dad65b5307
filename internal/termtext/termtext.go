// Package termtext makes text that a model, a provider or a file wrote
// safe to show on a terminal: what it shows is what the text says, whole.
package termtext

import (
	"fmt"
	"io"
	"strings"
	"unicode"
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
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i-1])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	flush()
	return b.String()
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

// Writer passes text to a terminal with its control characters made
// visible, as Safe writes them, but line breaks and tabs kept: a model's
// or a provider's text streamed to a terminal cannot drive it (an escape
// sequence can set the clipboard, OSC 52, or rewrite what is on the
// screen). A C1 control arriving split across two writes is held until
// its second byte.
type Writer struct {
	W    io.Writer
	held []byte // the first byte of a two-byte sequence
}

func (w *Writer) Write(p []byte) (int, error) {
	in := append(w.held, p...)
	w.held = nil
	var out []byte
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case c == '\n' || c == '\t':
			out = append(out, c)
		case c < 0x20 || c == 0x7f:
			out = fmt.Appendf(out, `\u%04x`, c)
		case c == 0xc2 && i+1 == len(in):
			w.held = []byte{c} // may start a C1 control: wait for the next byte
		case c == 0xc2 && in[i+1] >= 0x80 && in[i+1] <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, in[i+1]) // C1, as U+0080–U+009F
			i++
		default:
			out = append(out, c)
		}
	}
	if _, err := w.W.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held byte.
func (w *Writer) Flush() error {
	if len(w.held) == 0 {
		return nil
	}
	_, err := w.W.Write(w.held)
	w.held = nil
	return err
}
