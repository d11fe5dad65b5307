package gemini

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// stream accumulates one streamed response. Every chunk is a whole
// GenerateContentResponse holding the next parts of the model's content:
// text in pieces, each functionCall whole.
type stream struct {
	parts      []*part
	usage      providers.Usage
	finish     string
	responseID string
}

// part is one part of the content being rebuilt: either a run of plain text
// chunks merged into one, or a part kept verbatim (a call, anything signed,
// anything else).
type part struct {
	raw     []byte // verbatim part; nil for merged text
	text    strings.Builder
	thought bool
}

func newStream() *stream { return &stream{} }

// Add consumes one chunk. It returns the answer text the chunk adds, and an
// *APIError when the chunk is an error object or says the prompt was
// blocked.
func (s *stream) Add(ev providers.Event) (string, error) {
	if !gjson.ValidBytes(ev.Data) {
		return "", providers.Malformed("gemini: stream chunk is not valid JSON")
	}
	doc := gjson.ParseBytes(ev.Data)
	if doc.IsArray() { // a chunk list sent as one event
		var b strings.Builder
		var err error
		doc.ForEach(func(_, chunk gjson.Result) bool {
			if !chunk.IsObject() {
				err = providers.Malformed("gemini: a stream chunk list holds something other than objects")
				return false
			}
			var d string
			d, err = s.Add(providers.Event{Data: []byte(chunk.Raw)})
			b.WriteString(d)
			return err == nil
		})
		return b.String(), err
	}
	if !doc.IsObject() {
		return "", providers.Malformed("gemini: stream chunk is not a JSON object")
	}
	f := readFields(doc)
	if f.err.Exists() && f.err.Type != gjson.Null {
		if e := providers.StreamError(ev.Data); e != nil {
			return "", e
		}
	}
	if s.responseID == "" {
		s.responseID = f.responseID.String()
	}
	if f.usage.IsObject() {
		s.usage = readUsage(f.usage) // cumulative: the last one counts
	}
	cand := f.candidates.Get("0")
	if !cand.Exists() {
		if e := blocked(doc); e != nil {
			return "", e
		}
		return "", nil
	}
	var delta strings.Builder
	partsv := cand.Get("content.parts")
	if partsv.Exists() && !partsv.IsArray() {
		return "", providers.Malformed("gemini: stream chunk content parts is not an array")
	}
	for _, p := range partsv.Array() {
		delta.WriteString(s.addPart(p))
	}
	if r := cand.Get("finishReason").String(); r != "" {
		s.finish = r
	}
	return delta.String(), nil
}

// fields are the top-level members of a chunk, read in one pass rather than
// one scan per member: text chunks are most of a stream.
type fields struct {
	err, responseID, usage, candidates gjson.Result
}

func readFields(doc gjson.Result) (f fields) {
	providers.ReadMembers(doc,
		providers.Member{Key: "error", Dst: &f.err},
		providers.Member{Key: "responseId", Dst: &f.responseID},
		providers.Member{Key: "usageMetadata", Dst: &f.usage},
		providers.Member{Key: "candidates", Dst: &f.candidates})
	return f
}

// addPart appends one part and returns the answer text it adds. Plain text
// (only "text" and maybe "thought") continues the previous plain text part
// of the same kind; an empty plain text part adds nothing and is dropped.
// Any other part, a text part with a thoughtSignature included, is kept as
// it came.
func (s *stream) addPart(p gjson.Result) string {
	text, thought, plain := plainText(p)
	if !plain {
		s.parts = append(s.parts, &part{raw: slices.Clone([]byte(p.Raw))})
		if t := p.Get("text"); t.Type == gjson.String && !p.Get("thought").Bool() {
			return t.Str
		}
		return ""
	}
	if text == "" {
		return ""
	}
	if n := len(s.parts); n > 0 && s.parts[n-1].raw == nil && s.parts[n-1].thought == thought {
		s.parts[n-1].text.WriteString(text)
	} else {
		np := &part{thought: thought}
		np.text.WriteString(text)
		s.parts = append(s.parts, np)
	}
	if thought {
		return ""
	}
	return text
}

// plainText reports whether p is an object holding only a text string and
// optionally a thought flag.
func plainText(p gjson.Result) (text string, thought, plain bool) {
	if !p.IsObject() {
		return "", false, false
	}
	plain = true
	hasText := false
	p.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == "text" && v.Type == gjson.String:
			text, hasText = v.Str, true
		case k.Str == "thought" && (v.Type == gjson.True || v.Type == gjson.False):
			thought = v.Type == gjson.True
		default:
			plain = false
		}
		return plain
	})
	return text, thought, plain && hasText
}

// render returns the part as JSON.
func (p *part) render() json.RawMessage {
	if p.raw != nil {
		return p.raw
	}
	out := []byte(`{"text":`)
	out = append(out, providers.Quote(p.text.String())...)
	if p.thought {
		out = append(out, `,"thought":true`...)
	}
	return append(out, '}')
}

// Done is false: a Gemini stream ends at EOF, and a chunk after the one
// with finishReason may still carry usage.
func (s *stream) Done() bool { return false }

// Turn reads the rebuilt parts as ParseResponse reads a response's. A
// stream in which no chunk gave a finishReason was cut.
func (s *stream) Turn() (*providers.Turn, error) {
	if s.finish == "" {
		return nil, fmt.Errorf("gemini: %w: no chunk carried a finishReason", providers.ErrStreamCut)
	}
	parts := make([]json.RawMessage, len(s.parts))
	for i, p := range s.parts {
		parts[i] = p.render()
	}
	joined := providers.JoinArray(parts)
	// Generated ids depend on the whole reply and its response id, so that
	// the calls of two replies with identical parts still differ.
	seed := func() []byte { return append([]byte(s.responseID), joined...) }
	turn, err := readParts(parts, seed)
	if err != nil {
		return nil, err
	}
	if len(parts) > 0 {
		msg, err := modelContent(joined)
		if err != nil {
			return nil, err
		}
		turn.Messages = []json.RawMessage{msg}
	}
	turn.Usage = s.usage
	turn.StopReason = s.finish
	return turn, nil
}
