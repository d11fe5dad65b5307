package textproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/jsonpos"
)

// headLen is how much of an unfinished object is searched for signs of a
// call.
const headLen = 256

// Keys a strict-form call may have besides "tool". An object with any other
// key is data that happens to have a "tool" field, unless that field names
// a declared tool: models like to add "reason" or "thought".
var strictKeys = map[string]bool{"tool": true, "parameters": true, "arguments": true, "args": true, "params": true, "terminate": true}

// object reads the JSON object that opens at s[j]. Valid objects are calls
// or data; an invalid or unfinished one is reported only when it looks like
// an attempt at a call.
func (p *parser) object(s string, lo, j, hi int, tagged bool) ([]span, int) {
	e := p.jsonEnd(s, j, hi)
	if e < 0 {
		// A cut-off call names its tool near its start; looking further
		// would make text full of braces quadratic.
		head := s[j:min(hi, j+headLen)]
		if tagged || p.looksLikeCall(head) {
			return []span{broken(j, hi, Problem{Tool: p.namedTool(head),
				Message: "the JSON of the call ends before its closing brace (was the reply cut off?)"})}, hi
		}
		return nil, j + 1
	}
	raw := s[j:e]
	if !gjson.Valid(raw) {
		if tagged || p.looksLikeCall(raw) {
			return []span{broken(j, e, Problem{Tool: p.namedTool(raw), Message: "the call is not valid JSON: " + jsonError(raw)})}, e
		}
		return nil, j + 1
	}
	c, problem, isCall := p.objectCall(gjson.Parse(raw), tagged)
	if !isCall {
		return nil, e // data: skip it whole, calls are not nested in data
	}
	// `{"tool": ...}` written as inline code leaves no empty `` behind. The
	// backticks taken must lie in the scanned window and not before lo,
	// where an earlier span may already own them, and scanning resumes
	// after them: spans never overlap.
	ticks := 0
	for j-ticks-1 >= lo && e+ticks < hi && s[j-ticks-1] == '`' && s[e+ticks] == '`' {
		ticks++
	}
	return []span{attempt(j-ticks, e+ticks, c, problem)}, e + ticks
}

// array reads a JSON array of calls that opens at s[j]. An array holding
// anything else is scanned inside instead.
func (p *parser) array(s string, j, hi int) ([]span, int) {
	e := p.jsonEnd(s, j, hi)
	if e < 0 || !gjson.Valid(s[j:e]) {
		return nil, j + 1
	}
	sp := span{start: j, end: e}
	for _, el := range gjson.Parse(s[j:e]).Array() {
		if !el.IsObject() {
			return nil, j + 1
		}
		c, problem, isCall := p.objectCall(el, false)
		if !isCall {
			return nil, j + 1
		}
		if problem != nil {
			sp.addProblem(*problem)
		} else {
			sp.addCall(c)
		}
	}
	return []span{sp}, e
}

// objectCall reads a parsed JSON object as a call: the strict form
// {"tool", "parameters", "terminate"}, or {"name", "arguments"} as many
// models were trained to write. isCall false means the object is data.
func (p *parser) objectCall(v gjson.Result, tagged bool) (c call, problem *Problem, isCall bool) {
	keys := map[string]bool{}
	v.ForEach(func(k, _ gjson.Result) bool {
		keys[k.String()] = true
		return true
	})
	if keys["tool"] {
		name := v.Get("tool")
		_, known := p.tools[name.String()]
		for k := range keys {
			if !strictKeys[k] && !tagged && !(known && name.Type == gjson.String) {
				return call{}, nil, false
			}
		}
		if name.Type != gjson.String {
			return call{}, &Problem{Message: `"tool" must be a string naming the tool, got ` + describe(name)}, true
		}
		return p.finish(name.String(), firstOf(v, "parameters", "arguments", "args", "params"), v.Get("terminate"))
	}
	if keys["name"] && (keys["arguments"] || keys["parameters"]) {
		// Outside <tool_call> tags, only a declared tool's name makes this
		// a call: {"name": "Bob", "arguments": ...} is data.
		name := v.Get("name")
		if _, known := p.tools[name.String()]; !tagged && (name.Type != gjson.String || !known) {
			return call{}, nil, false
		}
		if name.Type != gjson.String {
			return call{}, &Problem{Message: `"name" must be a string naming the tool, got ` + describe(name)}, true
		}
		return p.finish(name.String(), firstOf(v, "arguments", "parameters"), v.Get("terminate"))
	}
	if fn := v.Get("function"); tagged && fn.IsObject() && fn.Get("name").Type == gjson.String {
		return p.finish(fn.Get("name").String(), fn.Get("arguments"), gjson.Result{})
	}
	if tagged {
		return call{}, &Problem{Message: `a tool call needs "tool" (or "name") and "parameters" keys`}, true
	}
	return call{}, nil, false
}

func firstOf(v gjson.Result, keys ...string) gjson.Result {
	for _, k := range keys {
		if r := v.Get(k); r.Exists() {
			return r
		}
	}
	return gjson.Result{}
}

// finish checks a call's tool, arguments and terminate flag.
func (p *parser) finish(tool string, args, terminate gjson.Result) (call, *Problem, bool) {
	if _, ok := p.tools[tool]; !ok {
		return call{}, &Problem{Message: p.unknownTool(tool)}, true
	}
	c := call{name: tool, args: "{}"}
	switch {
	case !args.Exists() || args.Type == gjson.Null:
	case args.IsObject():
		c.args = args.Raw
	case args.Type == gjson.String && gjson.Valid(args.String()) && gjson.Parse(args.String()).IsObject():
		c.args = strings.TrimSpace(args.String()) // arguments encoded as a JSON string, as in OpenAI's format
	default:
		return call{}, &Problem{Tool: tool, Message: fmt.Sprintf(`%s: "parameters" must be a JSON object, got %s`, tool, describe(args))}, true
	}
	if err := p.schemas[tool].check(tool, gjson.Parse(c.args)); err != nil {
		return call{}, &Problem{Tool: tool, Message: err.Error()}, true
	}
	switch terminate.Type {
	case gjson.True:
		c.terminate = true
	case gjson.False:
	default:
		if terminate.Exists() && terminate.Type != gjson.Null {
			return call{}, &Problem{Tool: tool, Message: fmt.Sprintf(`%s: "terminate" must be true or false, got %s`, tool, describe(terminate))}, true
		}
	}
	return c, nil, true
}

func (p *parser) unknownTool(name string) string {
	return fmt.Sprintf("unknown tool %q; the tools are: %s", shortText(name, 64), strings.Join(p.names, ", "))
}

// The patterns that find a tool's name in broken JSON, compiled on first
// use.
var (
	toolKey   = lazyRegexp(`["']tool["']\s*:`)
	toolValue = lazyRegexp(`["']tool["']\s*:\s*["']([A-Za-z0-9_.:-]+)["']`)
	nameValue = lazyRegexp(`["']name["']\s*:\s*["']([A-Za-z0-9_.:-]+)["']`)
)

// lazyRegexp compiles expr the first time it is needed.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// looksLikeCall tells a broken call from broken data: it names "tool", or
// names a known tool under "name".
func (p *parser) looksLikeCall(raw string) bool {
	return strings.Contains(raw, "tool") && toolKey().MatchString(raw) || p.namedTool(raw) != ""
}

// namedTool finds a known tool named in broken JSON, for the correction.
func (p *parser) namedTool(raw string) string {
	if !strings.Contains(raw, "tool") && !strings.Contains(raw, "name") {
		return "" // the regular expressions are slow on long text
	}
	for _, re := range []*regexp.Regexp{toolValue(), nameValue()} {
		if m := re.FindStringSubmatch(raw); m != nil {
			if _, ok := p.tools[m[1]]; ok {
				return m[1]
			}
		}
	}
	return ""
}

// jsonError describes where invalid JSON goes wrong, as line:column.
func jsonError(raw string) string {
	var v any
	err := json.Unmarshal([]byte(raw), &v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := jsonpos.Position([]byte(raw), syn.Offset)
		return fmt.Sprintf("%v at line %d, column %d", syn, line, col)
	}
	if err != nil {
		return err.Error()
	}
	return "invalid JSON"
}
