package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// NewStream returns an accumulator for one streamed response.
func (*Protocol) NewStream() providers.Stream {
	return &stream{items: map[int64]*streamItem{}, byID: map[string]int64{}}
}

// stream accumulates Responses API events. It dispatches on the JSON "type"
// of each event, never on the SSE event name: OpenRouter's /responses sends
// no event: lines at all. Items are kept by output_index; deltas name their
// item by item_id (the "fc_…" or "fc_tmp_…" id, not the call_id), which
// byID maps back to the index.
type stream struct {
	items map[int64]*streamItem
	byID  map[string]int64
	usage providers.Usage
	stop  string
	done  bool
	err   error // what a failed response or an error event reported
}

// streamItem is one output item as far as the stream has told it. final is
// the item of response.output_item.done, which is authoritative (for
// reasoning, only it has the complete encrypted_content); the accumulated
// fields stand in when a stream completes without it.
type streamItem struct {
	typ, id, callID, name string
	args, text            strings.Builder
	final                 []byte
}

func (s *stream) Done() bool { return s.done }

func (s *stream) Add(ev providers.Event) (string, error) {
	if s.done {
		return "", nil
	}
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 || string(data) == "[DONE]" {
		return "", nil
	}
	if !gjson.ValidBytes(data) {
		return "", providers.Malformed("responses: stream event %q is not valid JSON", ev.Name)
	}
	e := gjson.ParseBytes(data)
	switch typ := e.Get("type").String(); typ {
	case "response.output_item.added":
		item := e.Get("item")
		it := s.at(e.Get("output_index").Int(), item.Get("id").String())
		it.typ = item.Get("type").String()
		// An empty value never replaces one an earlier event gave.
		if c := item.Get("call_id").String(); c != "" {
			it.callID = c
		}
		if n := item.Get("name").String(); n != "" {
			it.name = n
		}
		it.args.WriteString(item.Get("arguments").String())
	case "response.function_call_arguments.delta":
		s.lookup(e).args.WriteString(e.Get("delta").String())
	case "response.function_call_arguments.done":
		it := s.lookup(e)
		if a := e.Get("arguments"); a.Type == gjson.String {
			it.args.Reset()
			it.args.WriteString(a.String())
		}
		if n := e.Get("name").String(); n != "" {
			it.name = n
		}
	case "response.output_text.delta", "response.refusal.delta":
		it := s.lookup(e)
		if it.typ == "" {
			it.typ = "message"
		}
		d := e.Get("delta").String()
		it.text.WriteString(d)
		return d, nil
	case "response.output_item.done":
		item := e.Get("item")
		if !item.IsObject() {
			return "", providers.Malformed("responses: %s without an item", typ)
		}
		it := s.at(e.Get("output_index").Int(), item.Get("id").String())
		it.typ = item.Get("type").String()
		it.final = []byte(item.Raw)
	case "response.completed", "response.incomplete":
		resp := e.Get("response")
		s.usage = usage(resp.Get("usage"))
		s.stop = stopReason(resp)
		if s.stop == "" {
			s.stop = strings.TrimPrefix(typ, "response.")
		}
		// The final response repeats the output; it fills in any item
		// whose done event went missing.
		for i, item := range resp.Get("output").Array() {
			if it := s.at(int64(i), item.Get("id").String()); it.final == nil {
				it.typ = item.Get("type").String()
				it.final = []byte(item.Raw)
			}
		}
		s.done = true
	case "response.failed":
		s.done = true
		s.err = failure(e.Get("response"))
		return "", s.err
	case "error":
		s.done = true
		s.err = providers.StreamError(data)
		return "", s.err
	default:
		// An error chunk in some other dialect (OpenRouter puts a
		// top-level "error" object in a 200 stream).
		if apiErr := providers.StreamError(data); apiErr != nil {
			s.done = true
			s.err = apiErr
			return "", s.err
		}
	}
	return "", nil
}

// at returns the item at an output index, creating it, and remembers its id.
func (s *stream) at(index int64, id string) *streamItem {
	it, ok := s.items[index]
	if !ok {
		it = &streamItem{}
		s.items[index] = it
	}
	if id != "" {
		it.id = id
		s.byID[id] = index
	}
	return it
}

// lookup finds the item a delta event is about: by item_id, else by
// output_index.
func (s *stream) lookup(e gjson.Result) *streamItem {
	if id := e.Get("item_id").String(); id != "" {
		if index, ok := s.byID[id]; ok {
			return s.items[index]
		}
	}
	return s.at(e.Get("output_index").Int(), e.Get("item_id").String())
}

func (s *stream) Turn() (*providers.Turn, error) {
	if s.err != nil {
		return nil, s.err
	}
	if !s.done {
		return nil, fmt.Errorf("responses: %w: no response.completed event", providers.ErrStreamCut)
	}
	indexes := make([]int64, 0, len(s.items))
	for i := range s.items {
		indexes = append(indexes, i)
	}
	slices.Sort(indexes)
	items := make([]gjson.Result, 0, len(indexes))
	for _, i := range indexes {
		raw, err := s.items[i].item()
		if err != nil {
			return nil, err
		}
		if raw != nil {
			items = append(items, gjson.ParseBytes(raw))
		}
	}
	t, err := turnFromItems(items)
	if err != nil {
		return nil, err
	}
	t.Usage = s.usage
	t.StopReason = s.stop
	return t, nil
}

// item is the output item as JSON: the final one, or one rebuilt from the
// deltas. Items of other types that never completed are skipped (nil).
func (it *streamItem) item() (json.RawMessage, error) {
	if it.final != nil {
		return it.final, nil
	}
	var doc []byte
	var err error
	switch it.typ {
	case "function_call":
		doc = []byte(`{"type":"function_call"}`)
		for _, f := range []struct{ path, value string }{
			{"id", it.id}, {"call_id", it.callID}, {"name", it.name}, {"arguments", it.args.String()},
		} {
			if doc, err = setString(doc, f.path, f.value); err != nil {
				return nil, err
			}
		}
	case "message":
		doc = []byte(`{"type":"message","role":"assistant","content":[{"type":"output_text"}]}`)
		if doc, err = setString(doc, "content.0.text", it.text.String()); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	return doc, nil
}
