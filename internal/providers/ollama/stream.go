package ollama

import (
	"fmt"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/tidwall/gjson"
)

// stream accumulates an NDJSON reply. Every line is a whole object: text and
// thinking arrive in fragments, each tool call whole in one done:false line,
// and the metrics in the final done:true line, which has no calls.
type stream struct {
	reply
	lines int
	done  bool
}

// Add implements providers.Stream. It returns the line's content fragment;
// thinking is kept for the Turn but not shown as it streams.
func (s *stream) Add(ev providers.Event) (string, error) {
	if s.done {
		return "", nil
	}
	s.lines++
	if !gjson.ValidBytes(ev.Data) {
		return "", fmt.Errorf("ollama: %w", providers.Malformed("stream line %d is not JSON", s.lines))
	}
	root := gjson.ParseBytes(ev.Data)
	if !root.IsObject() {
		return "", fmt.Errorf("ollama: %w", providers.Malformed("stream line %d is not a JSON object", s.lines))
	}
	if e := providers.StreamError(ev.Data); e != nil {
		return "", e
	}
	msg := root.Get("message")
	before := s.content.Len()
	if err := s.add(msg, ev.Data); err != nil {
		return "", fmt.Errorf("ollama: stream line %d: %w", s.lines, err)
	}
	if root.Get("done").Bool() {
		s.finish(root)
		s.done = true
	}
	return s.content.String()[before:], nil
}

// Done implements providers.Stream.
func (s *stream) Done() bool { return s.done }

// Turn implements providers.Stream.
func (s *stream) Turn() (*providers.Turn, error) {
	if !s.done {
		return nil, fmt.Errorf("ollama: %w: no done:true line after %d lines", providers.ErrStreamCut, s.lines)
	}
	return s.turn()
}
