package textproto

import (
	"strings"

	"github.com/ask-cli/ask/internal/providers"
)

// Result is what one reply said under the text tool protocol.
type Result struct {
	// Calls are the tool calls found, in the order they appear.
	Calls []providers.ToolCall `json:"calls"`
	// Text is the reply without its calls: the model's message to the user.
	Text string `json:"text"`
	// Terminate is set when a call said "terminate": true.
	Terminate bool `json:"terminate"`
	// Problems are fragments that looked like calls but could not be read.
	Problems []Problem `json:"problems,omitempty"`
}

// Problem is one fragment of a reply that looked like a tool call but was
// not one the loop can run.
type Problem struct {
	// Call is the fragment's place among the reply's attempted calls,
	// runnable or not, counted from 1: the number its error result has in
	// the results message (FormatResults).
	Call    int    `json:"call"`
	Tool    string `json:"tool,omitempty"` // the tool it named, when it named a known one
	Message string `json:"message"`
}

// Error joins the problems into one text for the model, or "" when there
// were none.
func (r Result) Error() string {
	msgs := make([]string, len(r.Problems))
	for i, p := range r.Problems {
		msgs[i] = p.Message
	}
	return strings.Join(msgs, "\n")
}

// call is a call read from the text, before it gets an id.
type call struct {
	name, args string
	terminate  bool
}

// span is a region of the reply taken out of the text: calls, a broken
// call, or hidden reasoning.
type span struct {
	start, end int
	found      []found // calls and broken calls, in the order they appear
}

// found is one attempted call: a call, or the problem that kept a
// fragment from being one.
type found struct {
	call    call
	problem *Problem
}

func (sp *span) addCall(c call)       { sp.found = append(sp.found, found{call: c}) }
func (sp *span) addProblem(p Problem) { sp.found = append(sp.found, found{problem: &p}) }

// attempt is the span of one attempted call: c, or problem when it is set.
func attempt(start, end int, c call, problem *Problem) span {
	sp := span{start: start, end: end}
	if problem != nil {
		sp.addProblem(*problem)
	} else {
		sp.addCall(c)
	}
	return sp
}

// broken is the span of a fragment that is only a problem.
func broken(start, end int, p Problem) span {
	sp := span{start: start, end: end}
	sp.addProblem(p)
	return sp
}

type parser struct {
	tools   map[string]providers.Tool
	names   []string
	schemas map[string]schema
	specs   map[string]argSpec

	// Per reply: where brackets end, and where each closing tag is last
	// seen, so that an unclosed tag repeated many times is not searched
	// for its end each time.
	ends      map[int]bracketEnd
	lastClose map[string]int
	reply     string
}

// closeTag finds the first tag in s[from:hi], or -1.
func (p *parser) closeTag(s string, from, hi int, tag string) int {
	last, ok := p.lastClose[tag]
	if !ok {
		last = strings.LastIndex(p.reply, tag)
		p.lastClose[tag] = last
	}
	if last < from {
		return -1
	}
	k := strings.Index(s[from:hi], tag)
	if k < 0 {
		return -1
	}
	return from + k
}

func newParser(tools []providers.Tool) *parser {
	p := &parser{tools: map[string]providers.Tool{}, schemas: map[string]schema{}, specs: map[string]argSpec{}}
	for _, t := range tools {
		if t.Name == "" {
			continue
		}
		if _, dup := p.tools[t.Name]; !dup {
			p.names = append(p.names, t.Name)
		}
		p.tools[t.Name] = t
		s := readSchema(t.Parameters)
		p.schemas[t.Name] = s
		p.specs[t.Name] = specFor(t.Name, s)
	}
	return p
}

// Parse reads a reply for tool calls in any of the accepted forms: the
// strict JSON object {"tool", "parameters", "terminate"} (bare, in a ```json
// fence, or several), <tool_call>…</tool_call> and <function=NAME>…</function>
// as local models emit them, and ```bash blocks whose first word names a
// tool. With no tools, the reply is all text.
func Parse(reply string, tools []providers.Tool) Result {
	if len(tools) == 0 {
		return Result{Text: tidy(reply)}
	}
	p := newParser(tools)
	p.reply, p.lastClose = reply, map[string]int{}
	var spans []span
	lo := 0
	// Some chat templates open the reasoning block themselves, so the reply
	// holds only its end.
	if end := strings.Index(reply, "</think>"); end >= 0 {
		if open := strings.Index(reply, "<think>"); open < 0 || open > end {
			lo = end + len("</think>")
			spans = append(spans, span{start: 0, end: lo})
		}
	}
	spans = append(spans, p.scan(reply, lo, len(reply), true, false)...)

	var res Result
	var text strings.Builder
	at := 0
	for _, sp := range spans {
		writeJoined(&text, reply[at:sp.start])
		at = sp.end
		for _, f := range sp.found {
			if f.problem != nil {
				pr := *f.problem
				pr.Call = len(res.Calls) + len(res.Problems) + 1
				res.Problems = append(res.Problems, pr)
				continue
			}
			c := f.call
			res.Calls = append(res.Calls, providers.ToolCall{
				ID: providers.GeneratedID([]byte(reply), len(res.Calls)), Name: c.name, Arguments: c.args})
			res.Terminate = res.Terminate || c.terminate
		}
	}
	writeJoined(&text, reply[at:])
	res.Text = tidy(text.String())
	return res
}

// writeJoined appends a piece of text, dropping one of two spaces that
// meet where a call was taken out of a sentence.
func writeJoined(b *strings.Builder, piece string) {
	if strings.HasSuffix(b.String(), " ") && strings.HasPrefix(piece, " ") {
		piece = piece[1:]
	}
	b.WriteString(piece)
}

// blankLines is compiled on first use, like every regular expression of
// the package, so that a run without the text protocol does not pay for it.
var blankLines = lazyRegexp(`\n[ \t]*\n(?:[ \t]*\n)+`)

// tidy closes the gaps that removed calls leave behind.
func tidy(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimSpace(blankLines().ReplaceAllString(s, "\n\n"))
}

// marker kinds, the places where a call may start.
type marker int

const (
	mObject marker = iota
	mArray
	mFence
	mToolCall
	mFunction
	mThink
)

// scan finds the calls in s[lo:hi]. Fences are recognised only at the top
// level; inside a <tool_call> (tagged) every JSON object is meant as a call.
func (p *parser) scan(s string, lo, hi int, top, tagged bool) []span {
	var spans []span
	owned := lo // the end of the last span: what lies before it is taken
	for i := lo; i < hi; {
		j, kind := next(s, i, hi, top)
		if j < 0 {
			break
		}
		found, end := p.at(s, owned, j, hi, kind, tagged)
		spans = append(spans, found...)
		if len(found) > 0 {
			owned = found[len(found)-1].end
		}
		i = max(end, j+1)
	}
	return spans
}

// next finds the first place at or after i where a call may start.
func next(s string, i, hi int, top bool) (int, marker) {
	for k := i; k < hi; k++ {
		switch s[k] {
		case '{':
			if c := firstNonSpace(s, k+1, hi); c == '"' || c == '\'' {
				return k, mObject
			}
		case '[':
			if firstNonSpace(s, k+1, hi) == '{' {
				return k, mArray
			}
		case '<':
			switch rest := s[k:hi]; {
			case strings.HasPrefix(rest, "<tool_call>"):
				return k, mToolCall
			case strings.HasPrefix(rest, "<function="):
				return k, mFunction
			case strings.HasPrefix(rest, "<think>"):
				return k, mThink
			}
		case '`':
			if top && strings.HasPrefix(s[k:hi], "```") && atLineStart(s, k) {
				return k, mFence
			}
		}
	}
	return -1, 0
}

func firstNonSpace(s string, i, hi int) byte {
	for ; i < hi; i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return s[i]
	}
	return 0
}

func atLineStart(s string, k int) bool {
	for k--; k >= 0; k-- {
		switch s[k] {
		case ' ', '\t':
			continue
		case '\n':
			return true
		}
		return false
	}
	return true
}

// at reads what starts at s[j], where an earlier span owns everything
// before lo: the spans it yields and where scanning resumes.
func (p *parser) at(s string, lo, j, hi int, kind marker, tagged bool) ([]span, int) {
	switch kind {
	case mThink:
		end := p.closeTag(s, j, hi, "</think>")
		if end < 0 {
			return nil, j + len("<think>")
		}
		return []span{{start: j, end: end + len("</think>")}}, end + len("</think>")
	case mFence:
		return p.fence(s, j, hi)
	case mToolCall:
		return p.toolCallTag(s, j, hi)
	case mFunction:
		return p.functionTag(s, j, hi)
	case mArray:
		return p.array(s, j, hi)
	}
	return p.object(s, lo, j, hi, tagged)
}

var (
	jsonLangs  = map[string]bool{"json": true, "jsonc": true, "json5": true, "js": true, "javascript": true, "tool_call": true, "tool": true, "xml": true}
	shellLangs = map[string]bool{"bash": true, "sh": true, "shell": true, "console": true, "zsh": true, "terminal": true}
)

// fence reads a fenced block that opens at s[j]. A block holding nothing
// but calls is removed whole; other blocks stay in the text.
func (p *parser) fence(s string, j, hi int) ([]span, int) {
	infoEnd := strings.IndexByte(s[j:hi], '\n')
	if infoEnd < 0 {
		return nil, hi // a fence opening on the last line holds nothing
	}
	infoEnd += j
	if strings.Contains(s[j+3:infoEnd], "```") {
		return nil, j + 3 // ```code``` on one line is inline code, not a fence
	}
	lang := strings.ToLower(strings.TrimSpace(strings.Trim(s[j:infoEnd], "`")))
	if f := strings.Fields(lang); len(f) > 0 {
		lang = f[0]
	}
	cs := infoEnd + 1
	ce, end := hi, hi // an unclosed fence runs to the end of the reply
	for k := cs; k < hi; {
		nl := strings.IndexByte(s[k:hi], '\n')
		lineEnd := hi
		if nl >= 0 {
			lineEnd = k + nl
		}
		if strings.HasPrefix(strings.TrimLeft(s[k:lineEnd], " \t"), "```") {
			ce, end = k, min(lineEnd+1, hi)
			break
		}
		k = lineEnd + 1
	}

	whole := func(found []found) []span {
		return []span{{start: j, end: end, found: found}}
	}
	if shellLangs[lang] || lang == "" {
		if found, ok := p.bash(s[cs:ce]); ok {
			return whole(found), end
		}
		if lang != "" {
			return nil, end
		}
	}
	if !jsonLangs[lang] && lang != "" {
		return nil, end // code in another language is text
	}
	inner := p.scan(s, cs, ce, false, lang == "tool_call")
	if len(inner) == 0 {
		return nil, end
	}
	if !onlySpaceOutside(s, cs, ce, inner) {
		return inner, end
	}
	var all []found
	for _, sp := range inner {
		all = append(all, sp.found...)
	}
	return whole(all), end
}

func onlySpaceOutside(s string, lo, hi int, spans []span) bool {
	at := lo
	for _, sp := range spans {
		if strings.TrimSpace(s[at:sp.start]) != "" {
			return false
		}
		at = sp.end
	}
	return strings.TrimSpace(s[at:hi]) == ""
}

// jsonEnd returns the index just past the bracket that closes the one at
// s[i], or -1 when s[:hi] ends first. Strings are skipped with their
// escapes. One pass records the end of every bracket it meets outside a
// string, so that the brackets nested in an unclosed one (a cut-off reply,
// or text full of braces) are not each scanned to the end again.
func (p *parser) jsonEnd(s string, i, hi int) int {
	if e, ok := p.ends[i]; ok && e.hi == hi {
		return e.end
	}
	if p.ends == nil {
		p.ends = map[int]bracketEnd{}
	}
	var open []int
	inString := false
	for k := i; k < hi; k++ {
		c := s[k]
		if inString {
			switch c {
			case '\\':
				k++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			open = append(open, k)
		case '}', ']':
			top := open[len(open)-1]
			open = open[:len(open)-1]
			p.ends[top] = bracketEnd{hi: hi, end: k + 1}
			if len(open) == 0 {
				return k + 1
			}
		}
	}
	for _, k := range open {
		p.ends[k] = bracketEnd{hi: hi, end: -1}
	}
	return -1
}

// bracketEnd is a remembered answer of jsonEnd for a region ending at hi.
type bracketEnd struct{ hi, end int }
