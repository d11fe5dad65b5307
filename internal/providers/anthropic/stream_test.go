package anthropic

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// sse renders events as an SSE body, each with its event name taken from the
// data's type.
func sse(events ...string) []byte {
	var b bytes.Buffer
	for _, e := range events {
		b.WriteString("event: " + gjson.Get(e, "type").String() + "\n")
		b.WriteString("data: " + e + "\n\n")
	}
	return b.Bytes()
}

const (
	evStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":5,"cache_read_input_tokens":50,"output_tokens":1}}}`
	evStop  = `{"type":"message_stop"}`
)

// TestStreamInterleavedBlocks: deltas address blocks by index, blocks may
// interleave and even start out of order; the turn lists them by index.
func TestStreamInterleavedBlocks(t *testing.T) {
	body := sse(evStart,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_b","name":"add","input":{}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Adding "}}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_c","name":"mul","input":{}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"b\": 2}"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" 1}"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"<now> & then"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}`,
		evStop)
	turn, shown, err := providertest.Stream(New(), body)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Adding <now> & then"; turn.Text != want || shown != want {
		t.Errorf("text = %q, shown = %q, want %q", turn.Text, shown, want)
	}
	wantCalls := []providers.ToolCall{
		{ID: "toolu_b", Name: "add", Arguments: `{"a": 1}`},
		{ID: "toolu_c", Name: "mul", Arguments: `{"b": 2}`},
	}
	providertest.SameJSON(t, "calls", providertest.Marshal(t, turn.Calls), providertest.Marshal(t, wantCalls))
	wantMsg := `{"role":"assistant","content":[{"type":"text","text":"Adding <now> & then"},{"type":"tool_use","id":"toolu_b","name":"add","input":{"a": 1}},{"type":"tool_use","id":"toolu_c","name":"mul","input":{"b": 2}}]}`
	if len(turn.Messages) != 1 || string(turn.Messages[0]) != wantMsg {
		t.Errorf("Messages = %s\nwant %s", turn.Messages, wantMsg)
	}
	wantUsage := providers.Usage{InputTokens: 55, OutputTokens: 42, CacheReadTokens: 50, TotalTokens: 97}
	if turn.Usage != wantUsage {
		t.Errorf("Usage = %+v, want %+v", turn.Usage, wantUsage)
	}
	if turn.StopReason != "tool_use" {
		t.Errorf("StopReason = %q", turn.StopReason)
	}
}

// TestStreamThinkingAndRedacted: thinking text and signature are rebuilt
// from their deltas; a redacted_thinking block is echoed as it started.
func TestStreamThinkingAndRedacted(t *testing.T) {
	body := sse(evStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"think."}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2lnbmF0dXJl+/=="}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x"}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Done."}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":30,"output_tokens_details":{"thinking_tokens":12}}}`,
		evStop)
	turn, shown, err := providertest.Stream(New(), body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"assistant","content":[{"type":"thinking","thinking":"Let me think.","signature":"c2lnbmF0dXJl+/=="},{"type":"redacted_thinking","data":"EmwKAhgBEgy3va"},{"type":"text","text":"Done."}]}`
	if len(turn.Messages) != 1 || string(turn.Messages[0]) != want {
		t.Errorf("Messages = %s\nwant %s", turn.Messages, want)
	}
	if turn.Reasoning != "Let me think." || turn.Text != "Done." || shown != "Done." {
		t.Errorf("reasoning %q, text %q, shown %q", turn.Reasoning, turn.Text, shown)
	}
	if turn.Usage.ReasoningTokens != 12 || turn.Usage.OutputTokens != 30 {
		t.Errorf("Usage = %+v", turn.Usage)
	}
}

// TestStreamToolInput covers the input rules: empty deltas give {}, no deltas
// keep the start's input, and invalid JSON stays in the call's arguments
// (to be reported back) while the echoed block gets {}.
func TestStreamToolInput(t *testing.T) {
	tests := []struct {
		name      string
		start     string
		deltas    []string
		wantArgs  string
		wantInput string
	}{
		{"only an empty fragment", `{"type":"tool_use","id":"t","name":"f","input":{}}`, []string{""}, "{}", "{}"},
		{"no delta at all", `{"type":"tool_use","id":"t","name":"f","input":{"k":1}}`, nil, `{"k":1}`, `{"k":1}`},
		{"fragments", `{"type":"tool_use","id":"t","name":"f","input":{}}`, []string{"", `{"path":`, ` "a\"b"}`}, `{"path": "a\"b"}`, `{"path": "a\"b"}`},
		{"invalid JSON", `{"type":"tool_use","id":"t","name":"f","input":{}}`, []string{`{"path": "a`}, `{"path": "a`, "{}"},
		{"not an object", `{"type":"tool_use","id":"t","name":"f","input":{}}`, []string{`[1]`}, `[1]`, "{}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := []string{evStart, `{"type":"content_block_start","index":0,"content_block":` + tt.start + `}`}
			for _, d := range tt.deltas {
				events = append(events, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+string(providers.Quote(d))+`}}`)
			}
			events = append(events, `{"type":"content_block_stop","index":0}`, evStop)
			turn, _, err := providertest.Stream(New(), sse(events...))
			if err != nil {
				t.Fatal(err)
			}
			if len(turn.Calls) != 1 || turn.Calls[0].Arguments != tt.wantArgs {
				t.Fatalf("calls = %+v, want arguments %q", turn.Calls, tt.wantArgs)
			}
			if got := gjson.GetBytes(turn.Messages[0], "content.0.input").Raw; got != tt.wantInput {
				t.Errorf("echoed input = %s, want %s", got, tt.wantInput)
			}
		})
	}
}

// TestStreamGeneratesMissingIDs: the generated id is the same in the call
// and in the echoed block.
func TestStreamGeneratesMissingIDs(t *testing.T) {
	body := sse(evStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"now","input":{}}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","name":"now","input":{}}}`,
		evStop)
	turn, _, err := providertest.Stream(New(), body)
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Calls) != 2 || turn.Calls[0].ID == "" || turn.Calls[0].ID == turn.Calls[1].ID {
		t.Fatalf("calls = %+v, want two distinct generated ids", turn.Calls)
	}
	for i, c := range turn.Calls {
		if got := gjson.GetBytes(turn.Messages[0], "content."+string(rune('0'+i))+".id").String(); got != c.ID {
			t.Errorf("block %d id = %q, call id = %q", i, got, c.ID)
		}
	}
	again, _, _ := providertest.Stream(New(), body)
	if again.Calls[0].ID != turn.Calls[0].ID {
		t.Errorf("generated id not stable: %q then %q", turn.Calls[0].ID, again.Calls[0].ID)
	}
}

func TestStreamErrors(t *testing.T) {
	tests := []struct {
		name    string
		body    []byte
		wantAPI string // error type of an *APIError, or ""
		wantIs  error
	}{
		{"error event", []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}   \n\n"), "overloaded_error", nil},
		{"error event after content", append(sse(evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}\n\n"...), "api_error", nil},
		{"error data without event name", []byte("data: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}\n\n"), "rate_limit_error", nil},
		{"cut before message_stop", sse(evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`), "", providers.ErrStreamCut},
		{"empty body", nil, "", providers.ErrStreamCut},
		{"cut inside an event", []byte("event: message_start\ndata: {\"type\":\"message_start\",\"mess"), "", providers.ErrMalformed},
		{"delta for a block never started", sse(evStart, `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`, evStop), "", providers.ErrMalformed},
		{"block started twice", sse(evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, evStop), "", providers.ErrMalformed},
		{"delta without index", sse(evStart, `{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}`, evStop), "", providers.ErrMalformed},
		{"tool_use without name", sse(evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","input":{}}}`, evStop), "", providers.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn, _, err := providertest.Stream(New(), tt.body)
			if err == nil {
				t.Fatalf("no error; turn = %+v", turn)
			}
			if tt.wantAPI != "" {
				var apiErr *providers.APIError
				if !errors.As(err, &apiErr) || apiErr.Type != tt.wantAPI || apiErr.Message == "" {
					t.Errorf("error = %v, want an *APIError of type %s", err, tt.wantAPI)
				}
				return
			}
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("error = %v, want %v", err, tt.wantIs)
			}
		})
	}
}

// TestStreamAddReturnsAPIError: the error comes out of Add itself, as the
// contract asks, not only out of Turn.
func TestStreamAddReturnsAPIError(t *testing.T) {
	s := New().NewStream()
	_, err := s.Add(providers.Event{Name: "error", Data: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)})
	var apiErr *providers.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 0 || apiErr.Type != "overloaded_error" {
		t.Errorf("Add error = %v, want an in-stream *APIError", err)
	}
}

// TestStreamPaddingAndPing: trailing padding inside data lines and ping
// events are harmless; events after message_stop are not read.
func TestStreamPaddingAndPing(t *testing.T) {
	s := New().NewStream()
	events := []providers.Event{
		{Name: "message_start", Data: []byte(evStart + "      ")},
		{Name: "ping", Data: []byte(`{"type": "ping"}`)},
		{Name: "content_block_start", Data: []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}        `)},
		{Name: "content_block_delta", Data: []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}` + "\t ")},
		{Name: "message_stop", Data: []byte(`{"type":"message_stop"    }`)},
		{Name: "content_block_delta", Data: []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"late"}}`)},
	}
	for _, ev := range events {
		if _, err := s.Add(ev); err != nil {
			t.Fatalf("Add(%s): %v", ev.Name, err)
		}
	}
	if !s.Done() {
		t.Fatal("not done after message_stop")
	}
	turn, err := s.Turn()
	if err != nil {
		t.Fatal(err)
	}
	if turn.Text != "ok" {
		t.Errorf("Text = %q, want ok", turn.Text)
	}
}

// TestStreamFixturesReachMessageStop: every recorded stream is read to its
// message_stop without an error, event by event.
func TestStreamFixturesReachMessageStop(t *testing.T) {
	for _, name := range providertest.Fixtures(t, ".sse") {
		body := providertest.Read(t, name)
		s := New().NewStream()
		n := 0
		err := providers.ReadSSE(bytes.NewReader(body), func(ev providers.Event) error {
			n++
			if _, err := s.Add(ev); err != nil {
				return err
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !s.Done() {
			t.Errorf("%s: not done after %d events", name, n)
		}
	}
}

// TestStreamUnchangedBlockKeepsItsBytes: a block no delta touched is echoed
// exactly as content_block_start gave it, escapes included.
func TestStreamUnchangedBlockKeepsItsBytes(t *testing.T) {
	start := `{"type":"thinking","thinking":"caf\u00e9 <ok>","signature":"c2ln"}`
	turn, _, err := providertest.Stream(New(), sse(evStart, `{"type":"content_block_start","index":0,"content_block":`+start+`}`, evStop))
	if err != nil {
		t.Fatal(err)
	}
	providertest.SameBytes(t, "echoed block", []byte(gjson.GetBytes(turn.Messages[0], "content.0").Raw), []byte(start))
	if turn.Reasoning != "café <ok>" {
		t.Errorf("Reasoning = %q", turn.Reasoning)
	}
}
