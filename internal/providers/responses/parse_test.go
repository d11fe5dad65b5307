package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// response wraps output items in a minimal completed Response object.
func response(items ...string) []byte {
	return []byte(`{"object":"response","status":"completed","error":null,"incomplete_details":null,"output":[` +
		strings.Join(items, ",") + `],"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":17}}`)
}

const (
	rsEnc   = `{"id":"rs_enc","type":"reasoning","encrypted_content":"ENC","summary":[{"type":"summary_text","text":"thinking about it"}],"status":"completed"}`
	rsPlain = `{"id":"rs_plain","type":"reasoning","summary":[],"content":[]}`
	fcA     = `{"id":"fc_a","type":"function_call","status":"completed","arguments":"{\"x\":1}","call_id":"call_a","name":"f"}`
	fcB     = `{"id":"fc_b","type":"function_call","status":"completed","arguments":"{}","call_id":"call_b","name":"g"}`
	msg     = `{"id":"msg_1","type":"message","status":"completed","role":"assistant","phase":"commentary","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Let me check. "}]}`
)

func TestParseResponse(t *testing.T) {
	tests := []struct {
		name      string
		body      []byte
		wantText  string
		wantCalls []providers.ToolCall
		wantEcho  string // the Turn.Messages as a JSON array
		wantStop  string
	}{
		{
			name:      "reasoning with encrypted content travels before its call",
			body:      response(rsEnc, fcA),
			wantCalls: []providers.ToolCall{{ID: "call_a", Name: "f", Arguments: `{"x":1}`}},
			wantEcho: `[{"type":"reasoning","id":"rs_enc","encrypted_content":"ENC","summary":[{"type":"summary_text","text":"thinking about it"}]},
			            {"type":"function_call","call_id":"call_a","name":"f","arguments":"{\"x\":1}"}]`,
			wantStop: "completed",
		},
		{
			name:      "reasoning without encrypted content is dropped",
			body:      response(rsPlain, fcA, fcB),
			wantCalls: []providers.ToolCall{{ID: "call_a", Name: "f", Arguments: `{"x":1}`}, {ID: "call_b", Name: "g", Arguments: `{}`}},
			wantEcho: `[{"type":"function_call","call_id":"call_a","name":"f","arguments":"{\"x\":1}"},
			            {"type":"function_call","call_id":"call_b","name":"g","arguments":"{}"}]`,
			wantStop: "completed",
		},
		{
			name:      "preamble message, then a call",
			body:      response(rsEnc, msg, fcA),
			wantText:  "Let me check. ",
			wantCalls: []providers.ToolCall{{ID: "call_a", Name: "f", Arguments: `{"x":1}`}},
			wantEcho: `[{"type":"reasoning","id":"rs_enc","encrypted_content":"ENC","summary":[{"type":"summary_text","text":"thinking about it"}]},
			            {"type":"message","role":"assistant","content":"Let me check. ","phase":"commentary"},
			            {"type":"function_call","call_id":"call_a","name":"f","arguments":"{\"x\":1}"}]`,
			wantStop: "completed",
		},
		{
			name:     "reasoning that ends the output has no following item and is dropped",
			body:     response(msg, rsEnc),
			wantText: "Let me check. ",
			wantEcho: `[{"type":"message","role":"assistant","content":"Let me check. ","phase":"commentary"}]`,
			wantStop: "completed",
		},
		{
			name:      "reasoning before an item that is not echoed is dropped with it",
			body:      response(rsEnc, `{"id":"ws_1","type":"web_search_call","status":"completed"}`, fcB),
			wantCalls: []providers.ToolCall{{ID: "call_b", Name: "g", Arguments: `{}`}},
			wantEcho:  `[{"type":"function_call","call_id":"call_b","name":"g","arguments":"{}"}]`,
			wantStop:  "completed",
		},
		{
			name:      "empty arguments become {}",
			body:      response(`{"type":"function_call","call_id":"call_e","name":"now","arguments":""}`),
			wantCalls: []providers.ToolCall{{ID: "call_e", Name: "now", Arguments: `{}`}},
			wantEcho:  `[{"type":"function_call","call_id":"call_e","name":"now","arguments":"{}"}]`,
			wantStop:  "completed",
		},
		{
			name:     "several text and refusal parts join",
			body:     response(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"},{"type":"refusal","refusal":"b"},{"type":"output_text","text":"c"}]}`),
			wantText: "abc",
			wantEcho: `[{"type":"message","role":"assistant","content":"abc"}]`,
			wantStop: "completed",
		},
		{
			name:     "incomplete gives its reason",
			body:     []byte(`{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"error":null,"output":[` + rsEnc + `]}`),
			wantEcho: `[]`,
			wantStop: "max_output_tokens",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn, err := New().ParseResponse(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if turn.Text != tt.wantText || turn.StopReason != tt.wantStop {
				t.Errorf("text %q stop %q, want %q %q", turn.Text, turn.StopReason, tt.wantText, tt.wantStop)
			}
			providertest.SameJSON(t, "calls", providertest.Marshal(t, providertest.CallsOrEmpty(turn.Calls)), providertest.Marshal(t, providertest.CallsOrEmpty(tt.wantCalls)))
			providertest.SameJSON(t, "messages", providers.JoinArray(turn.Messages), []byte(tt.wantEcho))
		})
	}
}

func TestParseResponseUsageAndReasoning(t *testing.T) {
	turn, err := New().ParseResponse(response(rsEnc, `{"type":"reasoning","id":"rs_2","summary":[],"content":[{"type":"reasoning_text","text":"more"}]}`, fcA))
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Usage{InputTokens: 10, OutputTokens: 7, CacheReadTokens: 4, ReasoningTokens: 3, TotalTokens: 17}
	if turn.Usage != want {
		t.Errorf("usage %+v, want %+v", turn.Usage, want)
	}
	if turn.Reasoning != "thinking about it\n\nmore" {
		t.Errorf("reasoning %q", turn.Reasoning)
	}
}

// TestGeneratedCallID checks that a call without a call_id gets a
// deterministic id that is the same in Turn.Calls and in the echo.
func TestGeneratedCallID(t *testing.T) {
	body := response(`{"type":"function_call","name":"f","arguments":"{}"}`, `{"type":"function_call","call_id":"","name":"g","arguments":"{}"}`)
	first, err := New().ParseResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := New().ParseResponse(body)
	if len(first.Calls) != 2 {
		t.Fatalf("calls %+v", first.Calls)
	}
	for i, c := range first.Calls {
		if c.ID == "" || c.ID != again.Calls[i].ID {
			t.Errorf("call %d: id %q, then %q", i, c.ID, again.Calls[i].ID)
		}
		if !bytes.Contains(first.Messages[i], []byte(`"call_id":"`+c.ID+`"`)) {
			t.Errorf("echo %s does not carry the generated id %s", first.Messages[i], c.ID)
		}
	}
	if first.Calls[0].ID == first.Calls[1].ID {
		t.Errorf("two calls share the id %s", first.Calls[0].ID)
	}
}

func TestParseResponseErrors(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		malformed bool
		apiMsg    string
		apiCode   string
	}{
		{name: "not JSON", body: `{"output":[`, malformed: true},
		{name: "not an object", body: `[1,2]`, malformed: true},
		{name: "no output", body: `{"status":"completed","error":null}`, malformed: true},
		{name: "call without name", body: string(response(`{"type":"function_call","call_id":"c","arguments":"{}"}`)), malformed: true},
		{name: "failed response", body: `{"status":"failed","error":{"code":"server_error","message":"The server had an error."},"output":[]}`,
			apiMsg: "The server had an error.", apiCode: "server_error"},
		{name: "error envelope", body: `{"error":{"message":"bad","type":"invalid_request_error","code":null}}`, apiMsg: "bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New().ParseResponse([]byte(tt.body))
			if err == nil {
				t.Fatal("no error")
			}
			if tt.malformed != errors.Is(err, providers.ErrMalformed) {
				t.Errorf("error %v: malformed %v, want %v", err, errors.Is(err, providers.ErrMalformed), tt.malformed)
			}
			var apiErr *providers.APIError
			if tt.apiMsg != "" && (!errors.As(err, &apiErr) || apiErr.Message != tt.apiMsg || apiErr.Code != tt.apiCode) {
				t.Errorf("error %v, want an APIError %q code %q", err, tt.apiMsg, tt.apiCode)
			}
		})
	}
}

// events renders typed Responses events as an SSE body without event:
// lines, the way OpenRouter sends them.
func events(evs ...string) []byte {
	var b bytes.Buffer
	b.WriteString(": \n\n")
	for _, e := range evs {
		b.WriteString("data: " + e + "\n\n")
	}
	return b.Bytes()
}

const completed = `{"type":"response.completed","response":{"status":"completed","error":null,"output":[],"usage":{"input_tokens":5,"output_tokens":6,"total_tokens":11}}}`

func TestStream(t *testing.T) {
	t.Run("text deltas, a call whose done item is authoritative, reasoning from its done item", func(t *testing.T) {
		body := events(
			`{"type":"response.created","response":{"status":"in_progress","error":null,"output":[]}}`,
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
			`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"FULL","summary":[]}}`,
			`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
			`{"type":"response.output_text.delta","output_index":1,"item_id":"msg_1","delta":"Hel"}`,
			`{"type":"response.output_text.delta","output_index":1,"item_id":"msg_1","delta":"lo"}`,
			`{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello"}]}}`,
			`{"type":"response.output_item.added","output_index":2,"item":{"id":"fc_tmp_1","type":"function_call","call_id":"call_1","name":"f","arguments":""}}`,
			`{"type":"response.function_call_arguments.delta","output_index":2,"item_id":"fc_tmp_1","delta":"{\"a\":"}`,
			`{"type":"response.function_call_arguments.delta","output_index":2,"item_id":"fc_tmp_1","delta":"1}"}`,
			`{"type":"response.output_item.done","output_index":2,"item":{"id":"fc_tmp_1","type":"function_call","call_id":"call_1","name":"f","arguments":"{\"a\":2}"}}`,
			completed,
			`[DONE]`,
		)
		turn, shown, err := providertest.Stream(New(), body)
		if err != nil {
			t.Fatal(err)
		}
		if shown != "Hello" || turn.Text != "Hello" {
			t.Errorf("shown %q, text %q", shown, turn.Text)
		}
		if len(turn.Calls) != 1 || turn.Calls[0] != (providers.ToolCall{ID: "call_1", Name: "f", Arguments: `{"a":2}`}) {
			t.Errorf("calls %+v", turn.Calls)
		}
		providertest.SameJSON(t, "messages", providers.JoinArray(turn.Messages), []byte(`[
			{"type":"reasoning","id":"rs_1","encrypted_content":"FULL","summary":[]},
			{"type":"message","role":"assistant","content":"Hello"},
			{"type":"function_call","call_id":"call_1","name":"f","arguments":"{\"a\":2}"}]`))
		if turn.Usage.TotalTokens != 11 || turn.StopReason != "completed" {
			t.Errorf("usage %+v stop %q", turn.Usage, turn.StopReason)
		}
	})

	t.Run("items without done events are rebuilt from deltas, keyed by item_id", func(t *testing.T) {
		body := events(
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_x","type":"function_call","call_id":"call_x","name":"f","arguments":""}}`,
			`{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_y","type":"function_call","call_id":"call_y","name":"g","arguments":""}}`,
			`{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_y","delta":"{\"b\""}`,
			`{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_x","delta":"{}"}`,
			`{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_y","delta":":1}"}`,
			completed,
		)
		turn, _, err := providertest.Stream(New(), body)
		if err != nil {
			t.Fatal(err)
		}
		want := []providers.ToolCall{{ID: "call_x", Name: "f", Arguments: `{}`}, {ID: "call_y", Name: "g", Arguments: `{"b":1}`}}
		providertest.SameJSON(t, "calls", providertest.Marshal(t, turn.Calls), providertest.Marshal(t, want))
		for _, m := range turn.Messages {
			if bytes.Contains(m, []byte(`"fc_`)) {
				t.Errorf("echo replays an fc_ id: %s", m)
			}
		}
	})

	t.Run("the completed response fills in a missing done item", func(t *testing.T) {
		body := events(`{"type":"response.completed","response":{"status":"completed","error":null,"output":[` + rsEnc + `,` + fcA + `]}}`)
		turn, _, err := providertest.Stream(New(), body)
		if err != nil {
			t.Fatal(err)
		}
		if len(turn.Calls) != 1 || len(turn.Messages) != 2 {
			t.Errorf("calls %+v, messages %d", turn.Calls, len(turn.Messages))
		}
	})

	t.Run("incomplete is an answer with a reason, not an error", func(t *testing.T) {
		body := events(
			`{"type":"response.output_text.delta","output_index":0,"item_id":"msg_1","delta":"Part"}`,
			`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"error":null,"output":[]}}`,
		)
		turn, shown, err := providertest.Stream(New(), body)
		if err != nil {
			t.Fatal(err)
		}
		if turn.StopReason != "max_output_tokens" || turn.Text != "Part" || shown != "Part" {
			t.Errorf("stop %q text %q shown %q", turn.StopReason, turn.Text, shown)
		}
	})
}

func TestStreamErrors(t *testing.T) {
	tests := []struct {
		name      string
		body      []byte
		cut       bool
		malformed bool
		apiMsg    string
		apiCode   string
	}{
		{name: "ends before response.completed", cut: true, body: events(
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"c","name":"f","arguments":""}}`,
			`{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_1","delta":"{"}`)},
		{name: "empty stream", cut: true, body: []byte(": keep-alive\n\n")},
		{name: "response.failed", apiMsg: "The model failed.", apiCode: "server_error", body: events(
			`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model failed."},"output":[]}}`)},
		{name: "error event", apiMsg: "Rate limit reached", apiCode: "rate_limit_exceeded", body: events(
			`{"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached","param":null,"sequence_number":3}`)},
		{name: "error object in a 200 stream", apiMsg: "Token limit reached", apiCode: "400", body: events(
			`{"error":{"code":400,"message":"Token limit reached"}}`)},
		{name: "event that is not JSON", malformed: true, body: []byte("event: response.created\ndata: {oops\n\n")},
		{name: "done item that is not an object", malformed: true, body: events(`{"type":"response.output_item.done","output_index":0,"item":7}`)},
		{name: "call without a name", malformed: true, body: events(
			`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"c","arguments":"{}"}}`, completed)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := providertest.Stream(New(), tt.body)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.cut != errors.Is(err, providers.ErrStreamCut) {
				t.Errorf("error %v: cut %v, want %v", err, errors.Is(err, providers.ErrStreamCut), tt.cut)
			}
			if tt.malformed != errors.Is(err, providers.ErrMalformed) {
				t.Errorf("error %v: malformed %v, want %v", err, errors.Is(err, providers.ErrMalformed), tt.malformed)
			}
			var apiErr *providers.APIError
			if tt.apiMsg != "" && (!errors.As(err, &apiErr) || apiErr.Message != tt.apiMsg || apiErr.Code != tt.apiCode || apiErr.StatusCode != 0) {
				t.Errorf("error %v, want an in-stream APIError %q code %q", err, tt.apiMsg, tt.apiCode)
			}
		})
	}

	// Turn after a failure reports the failure again; events after the
	// terminal one are not read.
	s := New().NewStream()
	if _, err := s.Add(providers.Event{Data: []byte(`{"type":"response.failed","response":{"error":{"message":"x"}}}`)}); err == nil {
		t.Fatal("response.failed: no error from Add")
	}
	if !s.Done() {
		t.Error("not done after response.failed")
	}
	if d, err := s.Add(providers.Event{Data: []byte(`{"type":"response.output_text.delta","delta":"late"}`)}); d != "" || err != nil {
		t.Errorf("event after the end: %q, %v", d, err)
	}
	if _, err := s.Turn(); err == nil {
		t.Error("Turn after response.failed: no error")
	}
}

// TestStreamMatchesResponse checks that a stream and the response it
// completes with give the same turn, for every recorded stream.
func TestStreamMatchesResponse(t *testing.T) {
	for _, name := range providertest.Fixtures(t, ".sse") {
		t.Run(name, func(t *testing.T) {
			body := providertest.Read(t, name)
			streamed, _, err := providertest.Stream(New(), body)
			if err != nil {
				t.Fatal(err)
			}
			var final []byte
			for _, line := range bytes.Split(body, []byte("\n")) {
				if bytes.Contains(line, []byte(`"type":"response.completed"`)) {
					final = bytes.TrimPrefix(line, []byte("data: "))
				}
			}
			var ev struct{ Response json.RawMessage }
			if err := json.Unmarshal(final, &ev); err != nil {
				t.Fatal(err)
			}
			whole, err := New().ParseResponse(ev.Response)
			if err != nil {
				t.Fatal(err)
			}
			providertest.SameJSON(t, "turn", turnJSON(t, streamed), turnJSON(t, whole))
		})
	}
}
