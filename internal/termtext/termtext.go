// Package termtext makes text that a model, a provider or a file wrote
// safe to show on a terminal: what it shows is what the text says, whole.
package termtext

import (
	"fmt"
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

// Plural is n with the noun that agrees with it: "1 step", "3 steps".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Shorten keeps text to one line of at most n runes, its runs of white
// space made one space, with "…" where it was cut.
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
