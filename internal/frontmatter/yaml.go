package frontmatter

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reads the YAML that front matter holds: a block mapping of
// keys to scalars (plain, quoted, literal | and folded >), lists (block or
// [flow]), and mappings (block or {flow}) under keys ask does not read. It
// is YAML 1.2's block subset, read strictly: what it takes, it reads as a
// YAML library does (FuzzSameAsYAMLLibrary holds it to go.yaml.in/yaml/v3),
// and what it does not take (anchors, tags, complex keys, nested flow
// collections) is an error naming it, so that a definition is left out
// rather than read wrong. A library would cost every run its package init
// and code, for a page of text that most runs never read.

type kind uint8

const (
	nullNode kind = iota
	scalarNode
	listNode
	mapNode
)

// Value is one node of front matter.
type Value struct {
	kind  kind
	text  string  // a scalar's
	plain bool    // a scalar written without quotes or | >
	items []Value // a list's
	keys  []string
	vals  []Value // a mapping's values, by keys
}

// reader reads lines of YAML; every line ended with a line break.
type reader struct {
	lines []string
	n     int // the line being read
	open  int // the line where the flow collection being read opened
}

func (r *reader) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", r.n+2, fmt.Sprintf(format, args...)) // +2: the opening "---" and counting from 1
}

func (r *reader) done() bool { return r.n >= len(r.lines) }

// readYAML reads lines as front matter: a mapping, or nothing.
func readYAML(lines []string) (Value, error) {
	r := &reader{lines: slices.Clone(lines)} // list rewrites its lines
	for i, l := range lines {
		if err := checkPrintable(l); err != nil {
			r.n = i
			return Value{}, r.errorf("%v", err)
		}
		if (strings.HasPrefix(l, "---") || strings.HasPrefix(l, "...")) && (len(l) == 3 || isBlank(l[3])) {
			r.n = i
			return Value{}, r.errorf("a second YAML document: front matter holds one")
		}
		if lead := l[:len(l)-len(strings.TrimLeft(l, " \t"))]; strings.Contains(lead, "\t") {
			r.n = i
			return Value{}, r.errorf("a tab indents this line: indent with spaces")
		}
		if strings.HasPrefix(l, "%") {
			r.n = i
			return Value{}, r.errorf("YAML directives (%%) are not read in front matter")
		}
	}
	r.skipEmpty()
	if r.done() {
		return Value{kind: mapNode}, nil
	}
	ind, err := r.indent()
	if err != nil {
		return Value{}, err
	}
	if _, _, ok, _ := splitKey(r.lines[r.n][ind:]); !ok {
		return Value{}, r.errorf("front matter must be keys with values (name: ...)")
	}
	v, err := r.mapping(ind)
	if err != nil {
		return Value{}, err
	}
	r.skipEmpty()
	if !r.done() {
		return Value{}, r.errorf("unexpected indentation")
	}
	return v, nil
}

func (k kind) String() string {
	return [...]string{"null", "scalar", "list", "mapping"}[k]
}

// checkPrintable refuses what YAML does not allow in a stream: control
// characters and invalid UTF-8.
func checkPrintable(s string) error {
	for i, c := range s {
		switch {
		case c == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return errors.New("invalid UTF-8")
		case c == 0x2028 || c == 0x2029:
			// Line and paragraph separators, which YAML 1.1 reads as
			// line breaks (as it does NEL, left out below).
			return fmt.Errorf("character %U: write it as an escape in double quotes", c)
		case c == '\t', c >= 0x20 && c <= 0x7e,
			c >= 0xa0 && c <= 0xd7ff, c >= 0xe000 && c <= 0xfffd && c != 0xfeff, c >= 0x10000 && c <= 0x10ffff:
		default:
			return fmt.Errorf("control character %U", c)
		}
	}
	return nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// isEmptyLine: only blanks, or a comment.
func isEmptyLine(l string) bool {
	t := strings.TrimLeft(l, " \t")
	return t == "" || t[0] == '#'
}

func (r *reader) skipEmpty() {
	for !r.done() && isEmptyLine(r.lines[r.n]) {
		r.n++
	}
}

// indent is the current line's indentation, which must be spaces.
func (r *reader) indent() (int, error) {
	l := r.lines[r.n]
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	if i < len(l) && l[i] == '\t' {
		return 0, r.errorf("a tab indents this line: indent with spaces")
	}
	return i, nil
}

// isListItem: a line's content that starts a block list item ("- x").
func isListItem(s string) bool { return s != "" && s[0] == '-' && (len(s) == 1 || isBlank(s[1])) }

// block reads the block node whose first line, the current one, is
// indented ind, more than its owner (indented parent).
func (r *reader) block(ind, parent int) (Value, error) {
	content := r.lines[r.n][ind:]
	if isListItem(content) {
		return r.list(ind)
	}
	if _, _, ok, err := splitKey(content); err != nil {
		return Value{}, r.errorf("%v", err)
	} else if ok {
		return r.mapping(ind)
	}
	return r.value(content, parent, false)
}

// mapping reads a block mapping whose keys are indented ind.
func (r *reader) mapping(ind int) (Value, error) {
	m := Value{kind: mapNode}
	for {
		more, err := r.nextAt(ind)
		if err != nil {
			return Value{}, err
		}
		if !more {
			return m, nil
		}
		content := r.lines[r.n][ind:]
		key, rest, ok, err := splitKey(content)
		switch {
		case err != nil:
			return Value{}, r.errorf("%v", err)
		case !ok && isListItem(content):
			return Value{}, r.errorf("a list item where a key was expected")
		case !ok:
			return Value{}, r.errorf("expected a key and a colon (key: value)")
		}
		if key == "<<" {
			return Value{}, r.errorf("merge keys (<<) are not read in front matter")
		}
		v, err := r.value(rest, ind, true)
		if err != nil {
			return Value{}, err
		}
		m.keys = append(m.keys, key)
		m.vals = append(m.vals, v)
	}
}

// nextAt skips empty lines and reports whether the next line goes on the
// block collection indented ind: not at the end nor at a line indented
// less, where the collection ends; a line indented more is an error.
func (r *reader) nextAt(ind int) (bool, error) {
	r.skipEmpty()
	if r.done() {
		return false, nil
	}
	li, err := r.indent()
	if err != nil {
		return false, err
	}
	if li > ind {
		return false, r.errorf("unexpected indentation")
	}
	return li == ind, nil
}

// list reads a block list whose dashes are indented ind.
func (r *reader) list(ind int) (Value, error) {
	l := Value{kind: listNode}
	for {
		more, err := r.nextAt(ind)
		if err != nil {
			return Value{}, err
		}
		if !more {
			return l, nil
		}
		content := r.lines[r.n][ind:]
		if !isListItem(content) {
			return l, nil // the parent mapping's next key
		}
		after := content[1:]
		spaces := len(after) - len(strings.TrimLeft(after, " "))
		item := after[spaces:]
		if item != "" && item[0] == '\t' {
			return Value{}, r.errorf("a tab after a list's dash: use spaces")
		}
		var v Value
		_, _, isKey, keyErr := splitKey(item)
		switch {
		case keyErr != nil:
			return Value{}, r.errorf("%v", keyErr)
		case item != "" && (isKey || isListItem(item)):
			// "- key: value" or "- - x": a node that starts on the dash's
			// line, its column the item's.
			col := ind + 1 + spaces
			r.lines[r.n] = strings.Repeat(" ", col) + item
			v, err = r.block(col, ind)
		default:
			v, err = r.value(item, ind, false)
		}
		if err != nil {
			return Value{}, err
		}
		l.items = append(l.items, v)
	}
}

// splitKey splits "key: rest" (a plain or quoted key on one line); ok is
// false for content that is not a key.
func splitKey(s string) (key, rest string, ok bool, err error) {
	if s == "" {
		return "", "", false, nil
	}
	switch s[0] {
	case '"', '\'':
		// Read on its own line, a quote that goes on past it is an
		// error: a quoted value, read (and checked) as one.
		text, after, err := (&reader{lines: []string{s}}).quoted(s)
		if err != nil {
			return "", "", false, nil
		}
		t := strings.TrimLeft(after, " \t")
		if t != "" && t[0] == ':' && (len(t) == 1 || isBlank(t[1])) {
			if len(s)-len(t) > maxKey {
				return "", "", false, fmt.Errorf("a key longer than %d characters", maxKey)
			}
			return text, t[1:], true, nil
		}
		return "", "", false, nil
	case '?':
		if len(s) == 1 || isBlank(s[1]) {
			return "", "", false, errors.New("complex keys (?) are not read in front matter")
		}
	case '[', '{', '&', '*', '!', '|', '>', '%', '@', '`', '#', ',', ']', '}':
		return "", "", false, nil
	case '-', ':':
		if len(s) == 1 || isBlank(s[1]) {
			return "", "", false, nil
		}
	}
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '#' && i > 0 && isBlank(s[i-1]):
			return "", "", false, nil
		case s[i] == ':' && (i+1 == len(s) || isBlank(s[i+1])):
			if i > maxKey {
				return "", "", false, fmt.Errorf("a key longer than %d characters", maxKey)
			}
			return strings.TrimRight(s[:i], " \t"), s[i+1:], true, nil
		}
	}
	return "", "", false, nil
}

// maxKey is the longest key read: YAML takes a key of at most 1,024
// characters on one line.
const maxKey = 1000

// value reads the node that follows a key's colon or a list's dash on the
// current line (rest), whose owner is indented ind; inMapping allows a
// list at the owner's own indentation. It leaves r at the line after the
// node.
func (r *reader) value(rest string, ind int, inMapping bool) (Value, error) {
	rest = strings.TrimLeft(rest, " \t")
	if rest == "" || rest[0] == '#' {
		r.n++
		r.skipEmpty()
		if r.done() {
			return Value{}, nil
		}
		li, err := r.indent()
		if err != nil {
			return Value{}, err
		}
		if li > ind {
			return r.block(li, ind)
		}
		if li == ind && inMapping && isListItem(r.lines[r.n][li:]) {
			return r.list(li)
		}
		return Value{}, nil
	}
	switch c := rest[0]; {
	case c == '|' || c == '>':
		return r.blockScalar(rest, ind)
	case c == '"' || c == '\'':
		text, after, err := r.quoted(rest)
		if err != nil {
			return Value{}, err
		}
		return Value{kind: scalarNode, text: text}, r.endOfNode(after)
	case c == '[' || c == '{':
		v, after, err := r.flow(rest)
		if err != nil {
			return Value{}, err
		}
		return v, r.endOfNode(after)
	case strings.IndexByte("&*!%@`", c) >= 0:
		return Value{}, r.errorf("%q starts an anchor, alias, tag or reserved indicator, which front matter does not read", c)
	case strings.IndexByte(",]}", c) >= 0:
		return Value{}, r.errorf("%q cannot start a value", c)
	case (c == '-' || c == '?' || c == ':') && (len(rest) == 1 || isBlank(rest[1])):
		return Value{}, r.errorf("%q here starts a node front matter does not read; quote the value", c)
	}
	return r.plain(rest, ind)
}

// endOfNode checks that only a comment follows a node on its line, and
// moves to the next line.
func (r *reader) endOfNode(after string) error {
	t := strings.TrimLeft(after, " \t")
	if t != "" && (t[0] != '#' || len(t) == len(after)) {
		if t[0] == ':' {
			return r.errorf("a key that spans lines, or a key where a value was expected")
		}
		return r.errorf("unexpected %q after a value", t)
	}
	r.n++
	return nil
}

// plain reads a plain scalar: first, then the lines indented more than
// ind that continue it, folded.
func (r *reader) plain(first string, ind int) (Value, error) {
	text, comment, err := plainLine(first)
	if err != nil {
		return Value{}, r.errorf("%v", err)
	}
	r.n++
	var b strings.Builder
	b.WriteString(text)
	breaks := 0
	for !comment && !r.done() {
		l := r.lines[r.n]
		t := strings.Trim(l, " \t")
		if t == "" {
			breaks++
			r.n++
			continue
		}
		li := len(l) - len(strings.TrimLeft(l, " "))
		if li <= ind || t[0] == '#' {
			break
		}
		seg, c, err := plainLine(t)
		if err != nil {
			return Value{}, r.errorf("%v", err)
		}
		if breaks == 0 {
			b.WriteByte(' ')
		}
		for ; breaks > 0; breaks-- {
			b.WriteByte('\n')
		}
		b.WriteString(seg)
		comment = c
		r.n++
	}
	v := Value{kind: scalarNode, text: b.String(), plain: true}
	if isNull(v.text) {
		v = Value{}
	}
	return v, nil
}

// plainLine is one line of a plain scalar, up to a comment.
func plainLine(s string) (text string, comment bool, err error) {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '#' && i > 0 && isBlank(s[i-1]):
			return strings.TrimRight(s[:i], " \t"), true, nil
		case s[i] == ':' && (i+1 == len(s) || isBlank(s[i+1])):
			return "", false, errors.New("a colon and a space inside a value: quote the value")
		}
	}
	return strings.TrimRight(s, " \t"), false, nil
}

func isNull(s string) bool {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return true
	}
	return false
}

// quoted reads a quoted scalar that starts the current line's rest and
// may go on over the following lines, folded as YAML folds them.
func (r *reader) quoted(s string) (text, after string, err error) {
	var b strings.Builder
	q := s[0]
	line := s[1:]
	for {
		keep := b.Len() // what a line's trailing blanks are cut back to
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case c == q && q == '\'' && i+1 < len(line) && line[i+1] == '\'':
				b.WriteByte('\'')
				i++
				keep = b.Len()
			case c == q:
				return b.String(), line[i+1:], nil
			case c == '\\' && q == '"' && i+1 == len(line):
				// An escaped line break joins the next line without a
				// space; empty lines after it are still line breaks.
				breaks, err := r.nextQuotedLine()
				if err != nil {
					return "", "", err
				}
				b.WriteString(strings.Repeat("\n", breaks))
				line = strings.TrimLeft(r.lines[r.n], " \t")
				i = -1
				keep = b.Len()
			case c == '\\' && q == '"':
				n, err := unescape(&b, line[i+1:])
				if err != nil {
					return "", "", r.errorf("%v", err)
				}
				i += n
				keep = b.Len()
			default:
				b.WriteByte(c)
				if !isBlank(c) {
					keep = b.Len()
				}
			}
		}
		// The line ends inside the quotes: its trailing blanks go, and
		// the break folds to a space, or to the empty lines after it.
		cut := b.String()[:keep]
		b.Reset()
		b.WriteString(cut)
		breaks, err := r.nextQuotedLine()
		if err != nil {
			return "", "", err
		}
		if breaks == 0 {
			b.WriteByte(' ')
		}
		for ; breaks > 0; breaks-- {
			b.WriteByte('\n')
		}
		line = strings.TrimLeft(r.lines[r.n], " \t")
	}
}

// nextQuotedLine moves to the next line of a quoted scalar that holds
// more than blanks, and counts the empty lines passed on the way.
func (r *reader) nextQuotedLine() (breaks int, err error) {
	for {
		r.n++
		if r.done() {
			return 0, r.errorf("a quoted value never ends: close its quote")
		}
		if strings.Trim(r.lines[r.n], " \t") != "" {
			return breaks, nil
		}
		breaks++
	}
}

// simpleEscapes are the escapes of one character after the backslash
// (a tab among them), by that character; an array of constants, which
// the linker lays out, so that no run pays to build it.
var simpleEscapes = [256]string{'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v", 'f': "\f",
	'r': "\r", 'e': "\x1b", ' ': " ", '"': "\"", '\\': "\\", 'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029"}

// unescape writes the escape that s (after the backslash) starts, and
// returns how many bytes of s it took.
func unescape(b *strings.Builder, s string) (int, error) {
	if s == "" {
		return 0, errors.New("a backslash ends the line inside a quoted value")
	}
	if out := simpleEscapes[s[0]]; out != "" {
		b.WriteString(out)
		return 1, nil
	}
	var width int
	switch s[0] {
	case 'x':
		width = 2
	case 'u':
		width = 4
	case 'U':
		width = 8
	default:
		return 0, fmt.Errorf("unknown escape \\%c in a quoted value", s[0])
	}
	if len(s) < 1+width {
		return 0, fmt.Errorf("a short \\%c escape in a quoted value", s[0])
	}
	code, err := strconv.ParseUint(s[1:1+width], 16, 32)
	if err != nil || code > utf8.MaxRune || code >= 0xd800 && code <= 0xdfff {
		return 0, fmt.Errorf("a bad \\%c escape in a quoted value", s[0])
	}
	b.WriteRune(rune(code))
	return 1 + width, nil
}

// flow reads a [list] or {mapping} of scalars, which may go on over the
// following lines.
func (r *reader) flow(s string) (Value, string, error) {
	r.open = r.n
	open, closer := s[0], byte(']')
	v := Value{kind: listNode}
	if open == '{' {
		closer, v.kind = '}', mapNode
	}
	s = s[1:]
	for {
		var err error
		if s, err = r.flowSpace(s); err != nil {
			return Value{}, "", err
		}
		if s[0] == closer {
			return v, s[1:], nil
		}
		keyLine, keyStart := r.n, s
		key, err := r.flowScalar(&s)
		if err != nil {
			return Value{}, "", err
		}
		if s, err = r.flowSpace(s); err != nil {
			return Value{}, "", err
		}
		isPair := s[0] == ':' && (len(s) == 1 || isBlank(s[1]) || s[1] == ',' || s[1] == closer)
		switch {
		case open == '[' && isPair:
			return Value{}, "", r.errorf("a key: value pair inside [ ] is not read in front matter")
		case open == '{' && !isPair:
			return Value{}, "", r.errorf("expected a colon after a key inside { }")
		case open == '{' && (r.n != keyLine || len(keyStart)-len(s) > maxKey):
			// As YAML takes a key: on one line, to its colon.
			return Value{}, "", r.errorf("a key inside { } must be on one line, at most %d characters to its colon", maxKey)
		case open == '{':
			if s, err = r.flowSpace(s[1:]); err != nil {
				return Value{}, "", err
			}
			val := Value{}
			if s[0] != ',' && s[0] != '}' {
				if val, err = r.flowScalar(&s); err != nil {
					return Value{}, "", err
				}
				if s, err = r.flowSpace(s); err != nil {
					return Value{}, "", err
				}
			}
			if key.text == "<<" {
				return Value{}, "", r.errorf("merge keys (<<) are not read in front matter")
			}
			v.keys, v.vals = append(v.keys, key.text), append(v.vals, val)
		default:
			v.items = append(v.items, key)
		}
		switch s[0] {
		case ',':
			s = s[1:]
		case closer:
		default:
			return Value{}, "", r.errorf("expected ',' or %q, found %q", closer, s[0])
		}
	}
}

// flowSpace skips blanks, comments and line ends inside a flow
// collection, to its next token.
func (r *reader) flowSpace(s string) (string, error) {
	for {
		t := strings.TrimLeft(s, " \t")
		switch {
		case t == "":
		case t[0] != '#':
			return t, nil
		case len(t) == len(s) && s != r.lines[r.n]:
			return "", r.errorf("a # that is not after a space inside [ ] or { }")
		}
		r.n++
		if r.done() {
			return "", fmt.Errorf("line %d: a [ or { never closes", r.open+2)
		}
		s = r.lines[r.n]
	}
}

// flowScalar reads a quoted or plain scalar inside a flow collection.
func (r *reader) flowScalar(s *string) (Value, error) {
	t := *s
	switch c := t[0]; {
	case c == '"' || c == '\'':
		text, after, err := r.quoted(t)
		*s = after
		return Value{kind: scalarNode, text: text}, err
	case strings.IndexByte("[{&*!|>%@`]},:", c) >= 0 || (c == '-' || c == '?') && (len(t) == 1 || isBlank(t[1]) || strings.IndexByte(",[]{}", t[1]) >= 0):
		return Value{}, r.errorf("%q inside [ ] or { } is not read in front matter", c)
	}
	i := 0
	for ; i < len(t); i++ {
		c := t[i]
		if c == '?' || c == ':' && (i+1 == len(t) || strings.IndexByte(",[]{}", t[i+1]) >= 0) {
			return Value{}, r.errorf("a ? or a colon before , [ ] { } inside [ ] or { }: quote the value")
		}
		if strings.IndexByte(",[]{}", c) >= 0 || c == ':' && isBlank(t[i+1]) || c == '#' && i > 0 && isBlank(t[i-1]) {
			break
		}
	}
	*s = t[i:]
	if i == len(t) {
		// A plain value inside [ ] or { } is not read over lines: the
		// next line must go on with a , ] } or comment.
		next := ""
		for k := r.n + 1; next == "" && k < len(r.lines); k++ {
			next = strings.Trim(r.lines[k], " \t")
		}
		if next != "" && strings.IndexByte(",]}#", next[0]) < 0 {
			return Value{}, r.errorf("a value inside [ ] or { } goes on over lines: quote it")
		}
	}
	v := Value{kind: scalarNode, text: strings.TrimRight(t[:i], " \t"), plain: true}
	if isNull(v.text) {
		v.kind = nullNode // its text kept for a key: {~: x} has the key "~"
	}
	return v, nil
}

// blockScalar reads a literal (|) or folded (>) scalar whose header is
// the current line's rest, and whose owner is indented ind.
func (r *reader) blockScalar(header string, ind int) (Value, error) {
	literal := header[0] == '|'
	chomp, explicit := 0, 0 // chomp: -1 strip, 0 clip, 1 keep
	h := header[1:]
	for k := 0; k < 2 && h != ""; k++ {
		switch c := h[0]; {
		case (c == '+' || c == '-') && chomp == 0:
			chomp = map[byte]int{'+': 1, '-': -1}[c]
		case c >= '1' && c <= '9' && explicit == 0:
			explicit = int(c - '0')
		default:
			k = 2
			continue
		}
		h = h[1:]
	}
	if t := strings.TrimLeft(h, " \t"); t != "" && t[0] != '#' {
		return Value{}, r.errorf("unexpected %q after a block scalar's | or >", t)
	}
	r.n++
	base := max(ind, 0)
	indent := 0
	if explicit > 0 {
		indent = base + explicit
	}
	var b strings.Builder
	var leadingBreak, trailingBreaks string
	leadingBlank := false
	// breaks reads the empty lines before the next line of text, and, the
	// first time, finds the indentation from them and it.
	breaks := func() error {
		maxIndent := 0
		for !r.done() {
			l := r.lines[r.n]
			col := 0
			for col < len(l) && l[col] == ' ' && (indent == 0 || col < indent) {
				col++
			}
			maxIndent = max(maxIndent, col)
			if col < len(l) && l[col] == '\t' && (indent == 0 || col < indent) {
				return r.errorf("a tab indents a block scalar's line: indent with spaces")
			}
			if col < len(l) {
				break
			}
			trailingBreaks += "\n"
			r.n++
		}
		if indent == 0 {
			indent = max(maxIndent, base+1, 1)
		}
		return nil
	}
	if err := breaks(); err != nil {
		return Value{}, err
	}
	for !r.done() {
		l := r.lines[r.n]
		if len(l) < indent || strings.TrimLeft(l[:indent], " ") != "" {
			break
		}
		text := l[indent:]
		trailingBlank := text != "" && isBlank(text[0])
		if !literal && leadingBreak == "\n" && !leadingBlank && !trailingBlank {
			if trailingBreaks == "" {
				b.WriteByte(' ')
			}
			leadingBreak = ""
		}
		b.WriteString(leadingBreak)
		b.WriteString(trailingBreaks)
		leadingBreak, trailingBreaks = "", ""
		leadingBlank = text != "" && isBlank(text[0])
		b.WriteString(text)
		leadingBreak = "\n"
		r.n++
		if err := breaks(); err != nil {
			return Value{}, err
		}
	}
	if chomp != -1 {
		b.WriteString(leadingBreak)
	}
	if chomp == 1 {
		b.WriteString(trailingBreaks)
	}
	return Value{kind: scalarNode, text: b.String()}, nil
}
