package textproto

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

const (
	toolCallOpen   = "<tool_call>"
	toolCallClose  = "</tool_call>"
	functionOpen   = "<function="
	functionClose  = "</function>"
	parameterOpen  = "<parameter="
	parameterClose = "</parameter>"
)

// toolCallTag reads <tool_call>…</tool_call>, the wrapping Qwen, Hermes and
// other chat templates use. It may hold a JSON object, several, or the
// <function=NAME> form. A missing closing tag is forgiven when what is
// inside reads as a call: many templates use it as a stop sequence.
func (p *parser) toolCallTag(s string, j, hi int) ([]span, int) {
	cs := j + len(toolCallOpen)
	ce, end := hi, hi
	closed := false
	if k := p.closeTag(s, cs, hi, toolCallClose); k >= 0 {
		ce, end, closed = k, k+len(toolCallClose), true
	}
	// A new <tool_call> ends one left open; this also keeps tags from
	// nesting.
	if k := strings.Index(s[cs:ce], toolCallOpen); k >= 0 {
		ce, end, closed = cs+k, cs+k, false
	}
	sp := span{start: j, end: end}
	for _, in := range p.scan(s, cs, ce, false, true) {
		sp.found = append(sp.found, in.found...)
	}
	if len(sp.found) == 0 {
		msg := `<tool_call> must hold a JSON object such as {"name": "TOOL", "arguments": {...}}`
		if !closed && strings.TrimSpace(s[cs:ce]) == "" {
			msg = "<tool_call> is empty and never closed (was the reply cut off?)"
		}
		sp.addProblem(Problem{Message: msg})
	}
	return []span{sp}, end
}

// functionTag reads <function=NAME>BODY</function>, where BODY is a JSON
// object (Llama 3.1) or <parameter=KEY>VALUE</parameter> tags (Qwen3-Coder).
func (p *parser) functionTag(s string, j, hi int) ([]span, int) {
	ns := j + len(functionOpen)
	gt := strings.IndexAny(s[ns:hi], ">\n")
	if gt < 0 || s[ns+gt] != '>' || gt > 128 {
		return nil, j + 1 // not a tag after all
	}
	name := strings.Trim(strings.TrimSpace(s[ns:ns+gt]), `"'`)
	bs := ns + gt + 1
	be, end := hi, hi
	if k := p.closeTag(s, bs, hi, functionClose); k >= 0 {
		be, end = k, k+len(functionClose)
	}
	c, problem := p.functionCall(name, s[bs:be])
	return []span{attempt(j, end, c, problem)}, end
}

func (p *parser) functionCall(name, body string) (call, *Problem) {
	if _, ok := p.tools[name]; !ok {
		return call{}, &Problem{Message: p.unknownTool(name)}
	}
	b := strings.TrimSpace(body)
	if b == "" || b[0] == '{' {
		if b != "" && !gjson.Valid(b) {
			return call{}, &Problem{Tool: name, Message: fmt.Sprintf("%s: the arguments in <function=%s> are not valid JSON: %s", name, name, jsonError(b))}
		}
		c, problem, _ := p.finish(name, gjson.Parse(b), gjson.Result{})
		return c, problem
	}
	sch := p.schemas[name]
	var o object
	rest := body
	for {
		k := strings.Index(rest, parameterOpen)
		if k < 0 {
			break
		}
		rest = rest[k+len(parameterOpen):]
		gt := strings.IndexByte(rest, '>')
		if gt < 0 {
			return call{}, &Problem{Tool: name, Message: fmt.Sprintf("%s: a <parameter= tag is not closed with '>'", name)}
		}
		key := strings.Trim(strings.TrimSpace(rest[:gt]), `"'`)
		rest = rest[gt+1:]
		var val string
		if e := strings.Index(rest, parameterClose); e >= 0 {
			val, rest = rest[:e], rest[e+len(parameterClose):]
		} else {
			e = strings.Index(rest, parameterOpen)
			if e < 0 {
				e = len(rest)
			}
			val, rest = rest[:e], rest[e:]
		}
		// The value usually sits on lines of its own.
		val = strings.TrimSuffix(strings.TrimPrefix(val, "\n"), "\n")
		prm := sch.find(key)
		if prm == nil {
			prm = &param{name: key}
		}
		raw, err := coerce(name, prm, val)
		if err != nil {
			return call{}, &Problem{Tool: name, Message: err.Error()}
		}
		o.set(key, raw)
	}
	if len(o.keys) == 0 {
		return call{}, &Problem{Tool: name, Message: fmt.Sprintf("%s: the body of <function=%s> must be a JSON object or <parameter=NAME>value</parameter> tags", name, name)}
	}
	c, problem, _ := p.finish(name, gjson.Parse(o.json()), gjson.Result{})
	return c, problem
}
