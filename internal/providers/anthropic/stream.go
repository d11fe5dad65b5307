package anthropic

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// stream accumulates one streamed Messages response. Content blocks are
// keyed by their index, because deltas of different blocks may interleave.
type stream struct {
	blocks     map[int64]*block
	msgStart   []byte // message_start data, part of generated ids
	usage      usage
	stopReason string
	done       bool
}

// block is one content block being rebuilt: content_block_start's block plus
// what the deltas added to its text, thinking, signature or input.
type block struct {
	start     []byte
	text      strings.Builder
	thinking  strings.Builder
	signature strings.Builder
	input     strings.Builder
	gotText   bool // a text, thinking or signature delta arrived
	gotInput  bool // an input_json_delta arrived, even an empty one
}

func newStream() *stream {
	return &stream{blocks: map[int64]*block{}}
}

// Add consumes one SSE event. It dispatches on the data's type, falling back
// to the event name; events it does not know (ping, future ones) are
// skipped. Data lines may carry trailing padding, which gjson tolerates.
func (s *stream) Add(ev providers.Event) (string, error) {
	if s.done {
		return "", nil
	}
	if !gjson.ValidBytes(ev.Data) {
		return "", providers.Malformed("anthropic: stream event %q: data is not valid JSON", ev.Name)
	}
	f := readFields(gjson.ParseBytes(ev.Data))
	typ := f.typ.String()
	if typ == "" {
		typ = ev.Name
	}
	if typ == "error" || ev.Name == "error" {
		if e := providers.StreamError(ev.Data); e != nil {
			return "", e
		}
		return "", providers.DecodeError(0, ev.Data)
	}

	switch typ {
	case "message_start":
		s.msgStart = slices.Clone(ev.Data)
		s.usage.update(f.message.Get("usage"))
	case "content_block_start":
		i, err := f.blockIndex(typ)
		if err != nil {
			return "", err
		}
		if !f.block.IsObject() {
			return "", providers.Malformed("anthropic: content_block_start %d has no content block", i)
		}
		if _, dup := s.blocks[i]; dup {
			return "", providers.Malformed("anthropic: content block %d started twice", i)
		}
		b := &block{start: []byte(f.block.Raw)}
		// A block may start with content; deltas append to it.
		text := f.block.Get("text").String()
		b.text.WriteString(text)
		b.thinking.WriteString(f.block.Get("thinking").String())
		b.signature.WriteString(f.block.Get("signature").String())
		s.blocks[i] = b
		if f.block.Get("type").String() == "text" {
			return text, nil
		}
	case "content_block_delta":
		i, err := f.blockIndex(typ)
		if err != nil {
			return "", err
		}
		b, ok := s.blocks[i]
		if !ok {
			return "", providers.Malformed("anthropic: delta for content block %d, which never started", i)
		}
		switch f.delta.Get("type").String() {
		case "text_delta":
			t := f.delta.Get("text").String()
			b.text.WriteString(t)
			b.gotText = true
			return t, nil
		case "thinking_delta":
			b.thinking.WriteString(f.delta.Get("thinking").String())
			b.gotText = true
		case "signature_delta":
			b.signature.WriteString(f.delta.Get("signature").String())
			b.gotText = true
		case "input_json_delta":
			b.input.WriteString(f.delta.Get("partial_json").String())
			b.gotInput = true
		}
		// citations_delta and unknown deltas are not needed to echo a
		// turn or run its tools.
	case "message_delta":
		if r := f.delta.Get("stop_reason"); r.Type == gjson.String {
			s.stopReason = r.String()
		}
		s.usage.update(f.usage)
	case "message_stop":
		s.done = true
	}
	return "", nil
}

// fields are the top-level members of an event, read in one pass rather
// than one scan per member: text deltas are most of a stream.
type fields struct {
	typ, index, delta, block, usage, message gjson.Result
}

func readFields(data gjson.Result) (f fields) {
	providers.ReadMembers(data,
		providers.Member{Key: "type", Dst: &f.typ},
		providers.Member{Key: "index", Dst: &f.index},
		providers.Member{Key: "delta", Dst: &f.delta},
		providers.Member{Key: "content_block", Dst: &f.block},
		providers.Member{Key: "usage", Dst: &f.usage},
		providers.Member{Key: "message", Dst: &f.message})
	return f
}

func (f fields) blockIndex(typ string) (int64, error) {
	if f.index.Type != gjson.Number || f.index.Int() < 0 {
		return 0, providers.Malformed("anthropic: %s event without a valid index", typ)
	}
	return f.index.Int(), nil
}

// Done reports whether message_stop arrived.
func (s *stream) Done() bool { return s.done }

// Turn rebuilds the content blocks in index order and reads them as
// ParseResponse does.
func (s *stream) Turn() (*providers.Turn, error) {
	if !s.done {
		return nil, fmt.Errorf("anthropic: %w: no message_stop event", providers.ErrStreamCut)
	}
	indexes := make([]int64, 0, len(s.blocks))
	for i := range s.blocks {
		indexes = append(indexes, i)
	}
	slices.Sort(indexes)

	blocks := make([]json.RawMessage, len(indexes))
	rawArgs := make([]string, len(indexes))
	for n, i := range indexes {
		raw, args, err := s.blocks[i].rebuild()
		if err != nil {
			return nil, fmt.Errorf("anthropic: content block %d: %w", i, err)
		}
		blocks[n], rawArgs[n] = raw, args
	}
	// Generated ids depend on the whole reply, so that two calls of two
	// replies with identical blocks still differ.
	seed := func() []byte {
		out := slices.Clone(s.msgStart)
		for _, b := range blocks {
			out = append(out, b...)
		}
		return out
	}
	turn, _, err := readBlocks(blocks, rawArgs, seed)
	if err != nil {
		return nil, err
	}
	if len(blocks) > 0 {
		msg, err := assistantMessage(providers.JoinArray(blocks))
		if err != nil {
			return nil, err
		}
		turn.Messages = []json.RawMessage{msg}
	}
	turn.Usage = s.usage.standard()
	turn.StopReason = s.stopReason
	return turn, nil
}

// rebuild renders the block as the non-streamed response would have held it;
// a block no delta changed keeps the bytes it started with. It also returns the streamed input text: when that is not valid JSON (the
// model's fault), the call keeps it as its arguments, to be reported back,
// while the echoed block gets an empty object, since input must be one.
func (b *block) rebuild() (json.RawMessage, string, error) {
	raw := b.start
	var err error
	if b.gotText {
		switch gjson.GetBytes(raw, "type").String() {
		case "text":
			raw, err = providers.SetRaw(raw, "text", providers.Quote(b.text.String()))
		case "thinking":
			raw, err = providers.SetRaw(raw, "thinking", providers.Quote(b.thinking.String()))
			if err == nil {
				raw, err = providers.SetRaw(raw, "signature", providers.Quote(b.signature.String()))
			}
		}
	}
	if err != nil {
		return nil, "", err
	}
	if !b.gotInput {
		return raw, "", nil
	}
	args := b.input.String()
	input := []byte(args)
	switch {
	case strings.TrimSpace(args) == "":
		args, input = "{}", []byte(`{}`)
	case !gjson.Valid(args) || !gjson.Parse(args).IsObject():
		input = []byte(`{}`)
	}
	raw, err = providers.SetRaw(raw, "input", input)
	if err != nil {
		return nil, "", err
	}
	return raw, args, nil
}
