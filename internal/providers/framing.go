package providers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxEventSize bounds one SSE event or NDJSON line. Thinking signatures and
// thought signatures run to kilobytes; a megabyte-sized tool argument is
// rare but real.
const maxEventSize = 64 << 20

// ReadSSE calls fn for each event of a text/event-stream until the stream
// ends or fn returns ErrStop or another error. It accepts LF and CRLF line
// ends, skips comment lines (": keep-alive"), joins multi-line data fields
// with "\n" and strips one space after the colon, per the SSE specification.
// Events with no data are skipped.
func ReadSSE(r io.Reader, fn func(Event) error) error {
	lines := newLineReader(r)
	var name string
	var data []byte
	hasData := false
	dispatch := func() error {
		if !hasData {
			name = ""
			return nil
		}
		ev := Event{Name: name, Data: data}
		name, data, hasData = "", nil, false
		return fn(ev)
	}
	for {
		line, err := lines.next()
		if err != nil {
			if err == io.EOF {
				return stopIsNil(dispatch())
			}
			return fmt.Errorf("read stream: %w", err)
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			if err := dispatch(); err != nil {
				return stopIsNil(err)
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		}
	}
}

// ReadNDJSON calls fn for each non-blank line until the stream ends or fn
// returns ErrStop or another error.
func ReadNDJSON(r io.Reader, fn func(Event) error) error {
	lines := newLineReader(r)
	for {
		line, err := lines.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read stream: %w", err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if err := fn(Event{Data: line}); err != nil {
			return stopIsNil(err)
		}
	}
}

// ErrEventTooLarge marks a stream line longer than maxEventSize: a reply
// ask will not read, so a malformed one.
var ErrEventTooLarge = fmt.Errorf("%w: a line of the stream is longer than %d MB", ErrMalformed, maxEventSize>>20)

// lineReader splits a stream into lines, looking at each byte once however
// the stream arrives: bufio.Scanner searches a pending line again from its
// start after every read, which is quadratic when a long line (a big tool
// argument) trickles in a few bytes at a time.
type lineReader struct {
	br   *bufio.Reader
	long []byte // a line longer than the reader's buffer, being assembled
	max  int    // the longest line accepted
}

// lineBuffer is the reader's buffer: a TLS record's most (16 KB), which
// holds any ordinary event whole. A longer line is assembled in long; a
// bigger buffer would only be 48 KB more of fresh memory for every reply,
// on a one-shot answer's path.
const lineBuffer = 16 << 10

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, lineBuffer), max: maxEventSize}
}

// next returns the next line without its "\n", valid until the next call.
// The last line may lack a "\n"; after it next returns io.EOF.
func (l *lineReader) next() ([]byte, error) {
	l.long = l.long[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		switch {
		case err == nil:
			chunk = chunk[:len(chunk)-1]
			if len(l.long) == 0 {
				return chunk, nil
			}
			return l.grow(chunk)
		case errors.Is(err, bufio.ErrBufferFull):
			if _, err := l.grow(chunk); err != nil {
				return nil, err
			}
		case errors.Is(err, io.EOF) && (len(chunk) > 0 || len(l.long) > 0):
			return l.grow(chunk)
		default:
			return nil, err
		}
	}
}

// grow appends chunk to the long line, within maxEventSize.
func (l *lineReader) grow(chunk []byte) ([]byte, error) {
	if len(l.long)+len(chunk) > l.max {
		return nil, ErrEventTooLarge
	}
	l.long = append(l.long, chunk...)
	return l.long, nil
}

// ErrStop ends ReadSSE or ReadNDJSON early without an error.
var ErrStop = errors.New("stop reading")

func stopIsNil(err error) error {
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// ReadStream feeds a framed stream through an accumulator, calling onDelta
// with each piece of text as it arrives, and returns the accumulated turn.
// A parser that panics on what it reads makes an error wrapping
// ErrMalformed.
func ReadStream(r io.Reader, f Framing, s Stream, onDelta func(string)) (turn *Turn, err error) {
	what := "the SSE stream"
	if f == NDJSON {
		what = "the NDJSON stream"
	}
	defer RecoverMalformed(what, &err)
	return readStream(r, f, s, onDelta)
}

// readProtocolStream is ReadStream for one protocol, named when its parser
// panics.
func readProtocolStream(p Protocol, r io.Reader, onDelta func(string)) (turn *Turn, err error) {
	defer RecoverMalformed("the "+p.Name()+" stream", &err)
	return readStream(r, p.Framing(), p.NewStream(), onDelta)
}

func readStream(r io.Reader, f Framing, s Stream, onDelta func(string)) (*Turn, error) {
	read := ReadSSE
	if f == NDJSON {
		read = ReadNDJSON
	}
	err := read(r, func(ev Event) error {
		if err := CheckNesting(ev.Data); err != nil {
			return err
		}
		delta, err := s.Add(ev)
		if err != nil {
			return err
		}
		if delta != "" && onDelta != nil {
			onDelta(delta)
		}
		if s.Done() {
			return ErrStop
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.Turn()
}

// IsStreamBody reports whether a recorded body looks like an SSE stream or an
// NDJSON stream (more than one JSON value, one a line) rather than a single
// JSON document.
func IsStreamBody(body []byte, f Framing) bool {
	t := bytes.TrimLeft(body, " \t\r\n")
	if f == SSE {
		return bytes.HasPrefix(t, []byte("data:")) || bytes.HasPrefix(t, []byte("event:")) ||
			bytes.HasPrefix(t, []byte(":")) || bytes.HasPrefix(t, []byte("id:"))
	}
	// One JSON document, however it is laid out, is a plain response; a
	// pretty-printed one spans many lines but is still not NDJSON.
	if json.Valid(t) {
		return false
	}
	first, rest, _ := bytes.Cut(t, []byte("\n"))
	return len(bytes.TrimSpace(rest)) > 0 && bytes.HasPrefix(bytes.TrimSpace(first), []byte("{"))
}

// ParseBody reads a response body that may be a plain JSON document or a whole
// recorded stream, as `ask provider parse-tool-calls` and replays need. A
// parser that panics on the body makes an error wrapping ErrMalformed.
func ParseBody(p Protocol, body []byte) (turn *Turn, err error) {
	if IsStreamBody(body, p.Framing()) {
		return readProtocolStream(p, bytes.NewReader(body), nil)
	}
	if err := CheckNesting(body); err != nil {
		return nil, err
	}
	return ParseResponse(p, body)
}

// MaxNesting is the deepest a provider's JSON may nest. A reply is echoed
// into the history and recorded, and encoding/json refuses to write what
// nests past 10000 levels: a deeper reply would end the run with a
// transcript that cannot be written.
const MaxNesting = 1000

// CheckNesting returns an error wrapping ErrMalformed when the JSON text b
// nests arrays and objects deeper than MaxNesting. It looks only at
// brackets outside strings, so it is cheap, and it says nothing of
// whether b is valid.
func CheckNesting(b []byte) error {
	if NestingDepth(b) > MaxNesting {
		return Malformed("the reply nests deeper than %d levels", MaxNesting)
	}
	return nil
}

// NestingDepth is the deepest that the arrays and objects of the JSON text
// b nest.
func NestingDepth(b []byte) int {
	deepest, _ := Shape(b)
	return deepest
}

// Shape reads the JSON text b outside its strings: how deep its arrays and
// objects nest, and whether it has whitespace between its tokens (which
// json.Compact would take out). It does not check that b is valid.
func Shape(b []byte) (deepest int, spaced bool) {
	depth := 0
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte cannot end the string
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		case ' ', '\t', '\n', '\r':
			spaced = true
		}
	}
	return deepest, spaced
}

// ParseResponse is p.ParseResponse, with a panic in the parser made an
// error wrapping ErrMalformed.
func ParseResponse(p Protocol, body []byte) (turn *Turn, err error) {
	defer RecoverMalformed("the "+p.Name()+" response", &err)
	return p.ParseResponse(body)
}

// RecoverMalformed, deferred where provider bytes enter a parser, turns a
// panic into an error wrapping ErrMalformed that says what could not be
// parsed: a reply that trips a bug in ask ends with a message, never with
// a stack trace. It must be deferred directly.
func RecoverMalformed(what string, err *error) {
	if v := recover(); v != nil {
		*err = Malformed("%s could not be parsed: ask failed on it (%v)", what, v)
	}
}
