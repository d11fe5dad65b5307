package command

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Clean turns what a command printed into its reply: it plays the output
// on a small virtual screen, so that lines redrawn with carriage returns,
// backspaces and cursor movements (spinners, progress bars) keep only what
// was drawn last, drops every other escape sequence (colours, cursor
// visibility, titles) and braille spinner frames, and removes the
// "Thinking..." block `ollama run` prints for reasoning models.
func Clean(out []byte) string {
	s := screen{lines: [][]rune{nil}}
	text := strings.ToValidUTF8(string(out), "\uFFFD")
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r == '\x1b':
			i = s.escape(text, i)
		case r == '\n':
			s.newline()
		case r == '\r':
			s.col, s.clearOnWrite = 0, true
		case r == '\b':
			s.col = max(0, s.col-1)
		case r == '\t':
			s.put(r)
		case r >= 0x2800 && r <= 0x28FF: // braille patterns: spinner frames
		case r < 0x20 || r == 0x7f:
			// other control characters draw nothing
		default:
			s.put(r)
		}
	}
	return dropThinking(s.text())
}

// maxMove bounds one cursor movement.
const maxMove = 1000

// screen is just enough of a terminal to replay redrawn lines.
type screen struct {
	lines    [][]rune
	row, col int
	// clearOnWrite makes the next character after a carriage return
	// replace the whole line: what a spinner draws is gone once real
	// output arrives, even when it is shorter.
	clearOnWrite bool
}

func (s *screen) line() *[]rune {
	for len(s.lines) <= s.row {
		s.lines = append(s.lines, nil)
	}
	return &s.lines[s.row]
}

func (s *screen) put(r rune) {
	l := s.line()
	if s.clearOnWrite {
		*l = (*l)[:min(s.col, len(*l))]
		s.clearOnWrite = false
	}
	for len(*l) < s.col {
		*l = append(*l, ' ')
	}
	if s.col < len(*l) {
		(*l)[s.col] = r
	} else {
		*l = append(*l, r)
	}
	s.col++
}

func (s *screen) newline() {
	s.row++
	s.col = 0
	s.clearOnWrite = false
	s.line()
}

// escape consumes one escape sequence starting after ESC at text[i] and
// returns the index after it. Cursor moves and erases act on the screen;
// everything else is dropped.
func (s *screen) escape(text string, i int) int {
	if i >= len(text) {
		return i
	}
	switch text[i] {
	case '[': // CSI: parameters, intermediates, one final byte
		j := i + 1
		for j < len(text) && text[j] >= 0x20 && text[j] <= 0x3f {
			j++
		}
		for j < len(text) && text[j] >= 0x20 && text[j] <= 0x2f {
			j++
		}
		if j >= len(text) {
			return j
		}
		s.csi(text[i+1:j], text[j])
		return j + 1
	case ']', 'P', '_', '^': // OSC, DCS, APC, PM: up to BEL or ESC \
		for j := i + 1; j < len(text); j++ {
			if text[j] == '\a' {
				return j + 1
			}
			if text[j] == '\x1b' && j+1 < len(text) && text[j+1] == '\\' {
				return j + 2
			}
		}
		return len(text)
	}
	return i + 1 // a two-character sequence such as ESC 7
}

func (s *screen) csi(params string, final byte) {
	n := 1
	first := strings.TrimLeft(strings.SplitN(params, ";", 2)[0], "?")
	if v, err := strconv.Atoi(first); err == nil {
		n = min(v, maxMove) // a wild move must not allocate a huge screen
	}
	l := s.line()
	switch final {
	case 'G': // to column n
		s.col, s.clearOnWrite = min(max(0, n-1), maxMove), n <= 1
	case 'K': // erase in line
		switch {
		case first == "" || first == "0":
			*l = (*l)[:min(s.col, len(*l))]
		case n == 1:
			for k := 0; k < min(s.col+1, len(*l)); k++ {
				(*l)[k] = ' '
			}
		case n == 2:
			*l = nil
		}
	case 'A': // up
		s.row = max(0, s.row-max(n, 1))
	case 'B': // down, as far as the last line drawn
		s.row = min(s.row+max(n, 1), len(s.lines)-1)
	case 'C': // right
		s.col = min(s.col+max(n, 1), maxMove)
	case 'D': // left
		s.col = max(0, s.col-max(n, 1))
	case 'J': // erase in display
		if first == "2" || first == "3" {
			s.lines, s.row, s.col = [][]rune{nil}, 0, 0
			return
		}
		*l = (*l)[:min(s.col, len(*l))]
		s.lines = s.lines[:s.row+1]
	}
}

func (s *screen) text() string {
	out := make([]string, len(s.lines))
	for i, l := range s.lines {
		out[i] = strings.TrimRight(string(l), " \t")
	}
	return strings.Trim(strings.Join(out, "\n"), "\n")
}

// dropThinking removes the reasoning `ollama run` shows before the answer
// of a thinking model.
func dropThinking(s string) string {
	const open, done = "Thinking...", "...done thinking."
	if !strings.HasPrefix(strings.TrimSpace(s), open) {
		return strings.TrimSpace(s)
	}
	if i := strings.Index(s, done); i >= 0 {
		return strings.TrimSpace(s[i+len(done):])
	}
	return strings.TrimSpace(s)
}
