package textproto

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// bashCommand is one tool call in a ```bash block.
type bashCommand struct {
	tool     string
	line     string // the first line after the tool name, continuations joined
	heredocs []*heredoc
	body     []string // further lines, for a tool that takes them
}

func (c *bashCommand) openHeredoc() *heredoc {
	for _, h := range c.heredocs {
		if !h.closed {
			return h
		}
	}
	return nil
}

// bash reads a fenced shell block as calls: each line whose first word
// names a tool is a call. ok is false when the block is an ordinary shell
// snippet (its first command is not a tool), which stays text.
func (p *parser) bash(content string) (attempts []found, ok bool) {
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	var cmds []*bashCommand
	var cur *bashCommand
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if cur != nil {
			if h := cur.openHeredoc(); h != nil {
				if h.stripTabs {
					line = strings.TrimLeft(line, "\t")
				}
				if strings.TrimSpace(line) == h.delim {
					h.closed = true
				} else {
					h.lines = append(h.lines, line)
				}
				continue
			}
			if spec := p.specs[cur.tool]; spec.rest != "" || spec.body != "" && len(cur.heredocs) == 0 {
				cur.body = append(cur.body, line)
				continue
			}
		}
		t := strings.TrimPrefix(strings.TrimSpace(line), "$ ")
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		word, rest := firstWord(t)
		if _, known := p.tools[word]; !known {
			if cur == nil {
				return nil, false
			}
			return []found{{problem: &Problem{Tool: cur.tool, Message: fmt.Sprintf(
				"the line %q in the bash block does not start with a tool name: write one call a line, TOOL ARGUMENTS", shortText(t, 60))}}}, true
		}
		for strings.HasSuffix(rest, `\`) && i+1 < len(lines) {
			i++
			rest = strings.TrimSuffix(rest, `\`) + " " + strings.TrimSpace(lines[i])
		}
		cur = &bashCommand{tool: word, line: rest}
		if p.specs[word].rest == "" {
			cur.line, cur.heredocs = cutHeredocs(rest)
		}
		cmds = append(cmds, cur)
	}
	if len(cmds) == 0 {
		return nil, false
	}
	for _, c := range cmds {
		got, problem := p.bashCall(c)
		attempts = append(attempts, found{call: got, problem: problem})
	}
	return attempts, true
}

// bashCall maps one command's words onto the tool's parameters.
func (p *parser) bashCall(c *bashCommand) (call, *Problem) {
	tool, spec, sch := c.tool, p.specs[c.tool], p.schemas[c.tool]
	fail := func(format string, args ...any) (call, *Problem) {
		return call{}, &Problem{Tool: tool, Message: tool + ": " + fmt.Sprintf(format, args...) + "; usage: " + oneLineUsage(spec.usage)}
	}
	if h := c.openHeredoc(); h != nil {
		return fail("the heredoc <<%s is never closed by a line %q", h.delim, h.delim)
	}
	line := strings.TrimSpace(c.line)
	body := strings.TrimRight(strings.Join(c.body, "\n"), " \t\n")

	// Parameters as one JSON object work for every tool.
	if strings.HasPrefix(line, "{") && len(c.heredocs) == 0 && body == "" && gjson.Valid(line) && gjson.Parse(line).IsObject() {
		got, problem, _ := p.finish(tool, gjson.Parse(line), gjson.Result{})
		return got, problem
	}

	var o object
	if spec.rest != "" {
		text := line
		if body != "" {
			text = strings.TrimSpace(text + "\n" + body)
		}
		if text != "" {
			raw, err := coerce(tool, paramOrText(sch, spec.rest), text)
			if err != nil {
				return call{}, &Problem{Tool: tool, Message: err.Error()}
			}
			o.set(spec.rest, raw)
		}
		return p.finishObject(tool, &o)
	}

	words, err := splitWords(line)
	if err != nil {
		return fail("%v", err)
	}
	docs := c.heredocs
	pos := 0
	positional := func(val string) *Problem {
		for pos < len(spec.positional) && o.has(spec.positional[pos]) {
			pos++
		}
		if pos >= len(spec.positional) {
			_, problem := fail("too many arguments (%q is one too many)", shortText(val, 40))
			return problem
		}
		name := spec.positional[pos]
		raw, err := coerce(tool, paramOrText(sch, name), val)
		if err != nil {
			return &Problem{Tool: tool, Message: err.Error() + "; usage: " + oneLineUsage(spec.usage)}
		}
		o.set(name, raw)
		pos++
		return nil
	}
	value := func(w string) string {
		if w == heredocWord && len(docs) > 0 {
			v := docs[0].body()
			docs = docs[1:]
			return v
		}
		return w
	}
	optionsDone := false
	for k := 0; k < len(words); k++ {
		w := words[k]
		if !optionsDone && w == "--" {
			optionsDone = true
			continue
		}
		if optionsDone || !isOption(w) {
			if problem := positional(value(w)); problem != nil {
				return call{}, problem
			}
			continue
		}
		opt, val, hasVal := strings.Cut(w, "=")
		name := spec.flags[opt]
		if name == "" && strings.HasPrefix(opt, "--") {
			name = strings.ReplaceAll(opt[2:], "-", "_")
		}
		prm := sch.find(name)
		if prm == nil {
			return fail("unknown option %s", opt)
		}
		if !hasVal && isSwitch(prm) {
			o.set(name, []byte("true"))
			continue
		}
		if !hasVal {
			if k+1 >= len(words) {
				return fail("option %s needs a value", opt)
			}
			k++
			val = value(words[k])
		}
		raw, err := coerce(tool, prm, val)
		if err != nil {
			return call{}, &Problem{Tool: tool, Message: err.Error()}
		}
		o.set(name, raw)
	}
	if body != "" {
		if spec.body == "" || o.has(spec.body) {
			return fail("the lines after the first are not part of any argument")
		}
		o.set(spec.body, providers.Quote(body+"\n"))
	}
	return p.finishObject(tool, &o)
}

func (p *parser) finishObject(tool string, o *object) (call, *Problem) {
	got, problem, _ := p.finish(tool, gjson.Parse(o.json()), gjson.Result{})
	if problem != nil && p.specs[tool].usage != "" && !strings.Contains(problem.Message, "usage:") {
		problem.Message += "; usage: " + oneLineUsage(p.specs[tool].usage)
	}
	return got, problem
}

// paramOrText returns a parameter of the schema, or a text parameter when
// the schema does not declare it.
func paramOrText(s schema, name string) *param {
	if p := s.find(name); p != nil {
		return p
	}
	return &param{name: name}
}

// isOption tells an option (-g, --path=x) from a word; a negative number
// is a word.
func isOption(w string) bool {
	if len(w) < 2 || w[0] != '-' {
		return false
	}
	_, err := strconv.ParseFloat(w, 64)
	return err != nil
}

func oneLineUsage(u string) string {
	return strings.ReplaceAll(u, "\n", " ⏎ ")
}
