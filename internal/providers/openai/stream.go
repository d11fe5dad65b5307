package openai

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"hash"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/tidwall/gjson"
)

// stream accumulates chat.completion.chunk events into one reply.
type stream struct {
	// hash covers every event's data, so generated call ids depend only on
	// the stream's bytes, like providers.GeneratedID for whole bodies.
	hash hash.Hash64

	text      strings.Builder
	refusal   strings.Builder
	reasoning strings.Builder // OpenRouter's delta.reasoning
	// reasoningContent is DeepSeek's, Moonshot's and llama.cpp's field;
	// sawReasoningContent records that the server uses it at all, since
	// thinking-mode servers want it back even when empty.
	reasoningContent    strings.Builder
	sawReasoningContent bool
	details             []*detail // OpenRouter reasoning_details, in order of first appearance
	calls               map[int]*callAcc
	extras              fields // other non-null delta fields (thought_signature, ...)

	finish    string
	usage     providers.Usage
	sawChunks bool
	done      bool
}

func newStream() *stream {
	return &stream{hash: fnv.New64a(), calls: map[int]*callAcc{}}
}

// callAcc is one tool call being assembled from deltas.
type callAcc struct {
	index   int
	id, typ string
	name    strings.Builder
	args    strings.Builder
	extras  fields // e.g. Gemini's extra_content on the call
}

// fields is an ordered set of raw JSON object members where a later value
// replaces an earlier one, unless the later one is null or "".
type fields struct {
	keys []string // raw (quoted) keys
	vals map[string][]byte
}

func (f *fields) set(rawKey string, raw []byte) {
	if f.vals == nil {
		f.vals = map[string][]byte{}
	}
	old, ok := f.vals[rawKey]
	if !ok {
		f.keys = append(f.keys, rawKey)
	}
	if !ok || blank(old) || !blank(raw) {
		f.vals[rawKey] = raw
	}
}

// blank reports whether a streamed value is a placeholder that a later
// fragment completes: null, or an empty string (OpenRouter sends a Claude
// reasoning entry's signature first as "" and the real one later).
func blank(raw []byte) bool {
	s := string(bytes.TrimSpace(raw))
	return s == "null" || s == `""`
}

// detail is one merged reasoning_details entry. Its text-like members
// arrive in fragments and are concatenated; other members (type, format,
// id, signature, index) keep their first value that is neither null nor "".
type detail struct {
	index  int
	typ    string
	keys   []string // raw keys, in order of first appearance
	vals   map[string][]byte
	concat map[string]*strings.Builder
}

// concatenated are the reasoning_details members that stream in pieces.
var concatenated = map[string]bool{"text": true, "summary": true, "data": true}

// Add implements providers.Stream.
func (s *stream) Add(ev providers.Event) (string, error) {
	if s.done {
		return "", nil
	}
	data := bytes.TrimSpace(ev.Data)
	if string(data) == "[DONE]" {
		s.done = true
		return "", nil
	}
	if len(data) == 0 {
		return "", nil
	}
	if !gjson.ValidBytes(data) {
		return "", providers.Malformed("openai: stream event is not JSON: %.80q", data)
	}
	s.hash.Write(data)
	s.sawChunks = true
	if e := providers.StreamError(data); e != nil {
		return "", e
	}
	chunk := gjson.ParseBytes(data)
	if u := chunk.Get("usage"); u.IsObject() {
		s.usage = parseUsage(u)
	}
	choice, ok := firstChoice(chunk.Get("choices"))
	if !ok {
		return "", nil
	}
	if e := providers.StreamError([]byte(choice.Raw)); e != nil {
		return "", e
	}
	if f := choice.Get("finish_reason"); f.Type == gjson.String && f.String() != "" {
		s.finish = f.String()
	}
	delta := choice.Get("delta")
	if !delta.IsObject() {
		return "", nil
	}
	var shown string
	var err error
	delta.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "role", "function_call", "audio", "annotations":
			// role is always assistant; the others are not echoed.
		case "content":
			t := contentText(v)
			s.text.WriteString(t)
			shown += t
		case "refusal":
			s.refusal.WriteString(v.String())
		case "reasoning_content":
			if v.Type != gjson.Null {
				s.sawReasoningContent = true
				s.reasoningContent.WriteString(v.String())
			}
		case "reasoning":
			s.reasoning.WriteString(v.String())
		case "reasoning_details":
			s.addDetails(v)
		case "tool_calls":
			err = s.addCalls(v)
		default:
			if v.Type != gjson.Null {
				s.extras.set(k.Raw, []byte(v.Raw))
			}
		}
		return err == nil
	})
	return shown, err
}

// addCalls merges one delta's tool_calls: entries are keyed by index (−1
// means 0, a missing index means the entry's position), id and type are
// taken when non-empty, name and arguments are concatenated.
func (s *stream) addCalls(list gjson.Result) error {
	if list.Type == gjson.Null {
		return nil
	}
	if !list.IsArray() {
		return providers.Malformed("openai: delta.tool_calls is not an array")
	}
	pos := 0
	list.ForEach(func(_, d gjson.Result) bool {
		i := pos
		pos++
		if idx := d.Get("index"); idx.Type == gjson.Number {
			i = int(idx.Int())
		}
		if i == -1 {
			i = 0
		}
		c := s.calls[i]
		if c == nil {
			c = &callAcc{index: i}
			s.calls[i] = c
		}
		if id := d.Get("id").String(); id != "" {
			c.id = providers.CallID(id)
		}
		if t := d.Get("type").String(); t != "" {
			c.typ = t
		}
		fn := d.Get("function")
		c.name.WriteString(fn.Get("name").String())
		if a := fn.Get("arguments"); a.Type == gjson.String {
			c.args.WriteString(a.String())
		} else if a.IsObject() {
			c.args.WriteString(a.Raw)
		}
		d.ForEach(func(k, v gjson.Result) bool {
			switch k.String() {
			case "index", "id", "type", "function":
			default:
				if v.Type != gjson.Null {
					c.extras.set(k.Raw, []byte(v.Raw))
				}
			}
			return true
		})
		return true
	})
	return nil
}

// addDetails merges OpenRouter reasoning_details fragments: an entry with
// the index and type of an earlier one extends it (an entry without a type
// extends the last one with its index); anything else starts a new entry.
func (s *stream) addDetails(list gjson.Result) {
	pos := 0
	list.ForEach(func(_, d gjson.Result) bool {
		if !d.IsObject() {
			return true
		}
		i := pos
		pos++
		if idx := d.Get("index"); idx.Type == gjson.Number {
			i = int(idx.Int())
		}
		typ := d.Get("type").String()
		var cur *detail
		for j := len(s.details) - 1; j >= 0; j-- {
			if e := s.details[j]; e.index == i && (typ == "" || e.typ == typ) {
				cur = e
				break
			}
		}
		if cur == nil {
			cur = &detail{index: i, typ: typ, vals: map[string][]byte{}, concat: map[string]*strings.Builder{}}
			s.details = append(s.details, cur)
		}
		d.ForEach(func(k, v gjson.Result) bool {
			cur.merge(k, v)
			return true
		})
		return true
	})
}

// merge adds one member of a fragment to the entry.
func (d *detail) merge(k, v gjson.Result) {
	key := k.Raw
	old, seen := d.vals[key]
	text := d.concat[key]
	switch {
	case concatenated[k.String()] && v.Type == gjson.String:
		if text == nil {
			text = &strings.Builder{}
			d.concat[key] = text
			if !seen {
				d.keys = append(d.keys, key)
			}
			delete(d.vals, key)
		}
		text.WriteString(v.String())
	case text != nil:
		// A null fragment of a text member adds nothing.
	case !seen:
		d.keys = append(d.keys, key)
		d.vals[key] = []byte(v.Raw)
	case blank(old):
		d.vals[key] = []byte(v.Raw)
	}
}

func (d *detail) render() json.RawMessage {
	b := []byte{'{'}
	for i, k := range d.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k...)
		b = append(b, ':')
		if c := d.concat[k]; c != nil {
			b = append(b, providers.Quote(c.String())...)
		} else {
			b = append(b, d.vals[k]...)
		}
	}
	return append(b, '}')
}

// Done implements providers.Stream.
func (s *stream) Done() bool { return s.done }

// Turn implements providers.Stream.
func (s *stream) Turn() (*providers.Turn, error) {
	if !s.done && s.finish == "" {
		if !s.sawChunks {
			return nil, fmt.Errorf("openai: %w: no chunks and no [DONE]", providers.ErrStreamCut)
		}
		return nil, fmt.Errorf("openai: %w: no finish_reason and no [DONE]", providers.ErrStreamCut)
	}
	t := &providers.Turn{
		Text:       s.text.String(),
		StopReason: s.finish,
		Usage:      s.usage,
	}
	switch {
	case s.reasoningContent.Len() > 0:
		t.Reasoning = s.reasoningContent.String()
	case s.reasoning.Len() > 0:
		t.Reasoning = s.reasoning.String()
	default:
		var b strings.Builder
		for _, d := range s.details {
			for _, k := range []string{`"text"`, `"summary"`} {
				if c := d.concat[k]; c != nil {
					b.WriteString(c.String())
				}
			}
		}
		t.Reasoning = b.String()
	}

	accs := make([]*callAcc, 0, len(s.calls))
	for _, c := range s.calls {
		accs = append(accs, c)
	}
	slices.SortFunc(accs, func(a, b *callAcc) int { return cmp.Compare(a.index, b.index) })
	sum := s.hash.Sum64()
	calls := make([]json.RawMessage, 0, len(accs))
	for i, c := range accs {
		call := providers.ToolCall{ID: c.id, Name: c.name.String(), Arguments: c.args.String()}
		if call.Name == "" {
			return nil, providers.Malformed("openai: streamed tool call %d has no function name", i)
		}
		if call.ID == "" {
			call.ID = streamID(sum, i)
		}
		call.Arguments = call.ArgumentsOrEmpty()
		t.Calls = append(t.Calls, call)
		calls = append(calls, c.render(call))
	}

	t.Messages = []json.RawMessage{s.message(calls)}
	return t, nil
}

// streamID has the shape of providers.GeneratedID, over the hash of the
// stream's events.
func streamID(sum uint64, i int) string {
	return "call_" + strconv.FormatUint(sum&0xffffffffff, 36) + "_" + strconv.Itoa(i)
}

func (c *callAcc) render(call providers.ToolCall) json.RawMessage {
	typ := c.typ
	if typ == "" {
		typ = "function"
	}
	b := []byte(`{"id":`)
	b = append(b, providers.Quote(call.ID)...)
	b = append(b, `,"type":`...)
	b = append(b, providers.Quote(typ)...)
	b = append(b, `,"function":{"name":`...)
	b = append(b, providers.Quote(call.Name)...)
	b = append(b, `,"arguments":`...)
	b = append(b, providers.Quote(call.Arguments)...)
	b = append(b, '}')
	for _, k := range c.extras.keys {
		b = append(b, ',')
		b = append(b, k...)
		b = append(b, ':')
		b = append(b, c.extras.vals[k]...)
	}
	return append(b, '}')
}

// message renders the assistant message to echo, with the fields a
// non-streamed reply of the same server would have had.
func (s *stream) message(calls []json.RawMessage) json.RawMessage {
	b := []byte(`{"role":"assistant"`)
	add := func(key string, raw []byte) {
		b = append(b, ',')
		b = append(b, key...)
		b = append(b, ':')
		b = append(b, raw...)
	}
	// A whole response has content null next to tool calls, which the
	// echo drops; content is required otherwise.
	if s.text.Len() > 0 || len(calls) == 0 {
		add(`"content"`, providers.Quote(s.text.String()))
	}
	if s.refusal.Len() > 0 {
		add(`"refusal"`, providers.Quote(s.refusal.String()))
	}
	if s.sawReasoningContent {
		add(`"reasoning_content"`, providers.Quote(s.reasoningContent.String()))
	}
	if s.reasoning.Len() > 0 {
		add(`"reasoning"`, providers.Quote(s.reasoning.String()))
	}
	if len(s.details) > 0 {
		items := make([]json.RawMessage, len(s.details))
		for i, d := range s.details {
			items[i] = d.render()
		}
		add(`"reasoning_details"`, providers.JoinArray(items))
	}
	for _, k := range s.extras.keys {
		add(k, s.extras.vals[k])
	}
	if len(calls) > 0 {
		add(`"tool_calls"`, providers.JoinArray(calls))
	}
	return append(b, '}')
}
