package openai

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
	"github.com/tidwall/gjson"
)

func TestBasics(t *testing.T) {
	p := New()
	if got := p.Name(); got != "openai" {
		t.Errorf("Name() = %q; want openai", got)
	}
	if got := p.Framing(); got != providers.SSE {
		t.Errorf("Framing() = %v; want SSE", got)
	}
	endpoints := []struct{ base, want string }{
		{"https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"},
		{"https://openrouter.ai/api/v1/", "https://openrouter.ai/api/v1/chat/completions"},
		{"https://api.deepseek.com//", "https://api.deepseek.com/chat/completions"},
		{"http://localhost:1234/v1", "http://localhost:1234/v1/chat/completions"},
	}
	for _, tt := range endpoints {
		if got := p.Endpoint(tt.base, "some-model", true); got != tt.want {
			t.Errorf("Endpoint(%q) = %q; want %q", tt.base, got, tt.want)
		}
	}
	h := http.Header{}
	p.Authorize(h, "fake-test")
	if got := h.Get("Authorization"); got != "Bearer fake-test" {
		t.Errorf("Authorization = %q; want Bearer fake-test", got)
	}
	h = http.Header{}
	p.Authorize(h, "")
	if _, ok := h["Authorization"]; ok {
		t.Errorf("Authorization set with an empty key: %q", h.Get("Authorization"))
	}
}

// TestGolden parses every recorded response and stream into the
// standardized turn and compares it with testdata/golden.
func TestGolden(t *testing.T) {
	for _, name := range responseFixtures(t) {
		t.Run(name, func(t *testing.T) {
			turn, err := parseFixture(t, name)
			out := map[string]any{}
			if err != nil {
				out["error"] = err.Error()
				var apiErr *providers.APIError
				out["api_error"] = errors.As(err, &apiErr)
			} else {
				out["text"] = turn.Text
				out["reasoning"] = turn.Reasoning
				out["calls"] = turn.Calls
				out["messages"] = turn.Messages
				out["usage"] = turn.Usage
				out["stop_reason"] = turn.StopReason
				checkEcho(t, turn)
			}
			providertest.Golden(t, strings.TrimSuffix(name, ".json"), providertest.Marshal(t, out))
		})
	}
}

// checkEcho asserts what every echoed reply must satisfy: one assistant
// message, no null or response-only fields, and tool_calls entries whose
// ids, names and arguments are exactly the standardized calls.
func checkEcho(t *testing.T, turn *providers.Turn) {
	t.Helper()
	if len(turn.Messages) != 1 {
		t.Fatalf("Messages has %d items; want 1", len(turn.Messages))
	}
	msg := gjson.ParseBytes(turn.Messages[0])
	if !gjson.ValidBytes(turn.Messages[0]) || !msg.IsObject() {
		t.Fatalf("echo is not a JSON object: %s", turn.Messages[0])
	}
	if got := msg.Get("role").String(); got != "assistant" {
		t.Errorf("echo role = %q; want assistant", got)
	}
	msg.ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.Null || k.String() == "annotations" || k.String() == "audio" {
			t.Errorf("echo keeps %s: %s", k.String(), v.Raw)
		}
		return true
	})
	echoed := msg.Get("tool_calls").Array()
	if len(echoed) != len(turn.Calls) {
		t.Fatalf("echo has %d tool_calls; Calls has %d", len(echoed), len(turn.Calls))
	}
	for i, c := range turn.Calls {
		e := echoed[i]
		if c.ID == "" || c.Name == "" {
			t.Errorf("call %d has an empty id or name: %+v", i, c)
		}
		if e.Get("id").String() != c.ID || e.Get("function.name").String() != c.Name ||
			e.Get("function.arguments").String() != c.Arguments || e.Get("type").String() != "function" {
			t.Errorf("echoed call %d = %s; want id %q name %q arguments %q", i, e.Raw, c.ID, c.Name, c.Arguments)
		}
		if e.Get("index").Exists() {
			t.Errorf("echoed call %d keeps the chunk-only index: %s", i, e.Raw)
		}
	}
	if len(turn.Calls) == 0 && !msg.Get("content").Exists() {
		t.Errorf("echo without tool calls has no content: %s", msg.Raw)
	}
}

// TestErrorBodies checks the recorded error bodies: DecodeError reads their
// message, type and code, and ParseResponse of the same body (an error
// inside a 200 answer) returns the *APIError.
func TestErrorBodies(t *testing.T) {
	tests := []struct {
		name                 string
		status               int
		message, typ, code   string
		retryable, authError bool
	}{
		{"openai-chat/pydantic-error-400-system-role.json", 400,
			"Unsupported value: 'messages[0].role' does not support 'system' with this model.", "invalid_request_error", "unsupported_value", false, false},
		{"openai-chat/pydantic-error-400-web-search-unsupported.json", 400,
			"Web search options not supported with this model.", "invalid_request_error", "", false, false},
		{"openrouter/pydantic-error-429-rate-limit.json", 429,
			"Provider returned error (google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream. Please retry shortly, or add your own key to accumulate your rate limits: https://openrouter.ai/settings/integrations)", "", "429", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := providertest.Read(t, tt.name)
			e := providers.DecodeError(tt.status, body)
			if e.Message != tt.message || e.Type != tt.typ || e.Code != tt.code {
				t.Errorf("DecodeError = message %q type %q code %q; want %q %q %q", e.Message, e.Type, e.Code, tt.message, tt.typ, tt.code)
			}
			if e.Retryable() != tt.retryable || e.IsAuth() != tt.authError {
				t.Errorf("Retryable() = %v, IsAuth() = %v; want %v, %v", e.Retryable(), e.IsAuth(), tt.retryable, tt.authError)
			}
			_, err := New().ParseResponse(body)
			var apiErr *providers.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("ParseResponse error = %v; want an *APIError", err)
			}
			if apiErr.Message != tt.message || apiErr.Code != tt.code {
				t.Errorf("ParseResponse APIError = %q %q; want %q %q", apiErr.Message, apiErr.Code, tt.message, tt.code)
			}
		})
	}
}

// TestStreamErrorIn200 replays OpenRouter's 200 stream whose last chunk
// carries a top-level error: Add must return that error.
func TestStreamErrorIn200(t *testing.T) {
	body := providertest.Read(t, "openrouter/pydantic-stream-error-in-200.sse")
	_, err := New().ParseToolCalls(body)
	var apiErr *providers.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v; want an *APIError", err)
	}
	if apiErr.Message != "Token limit reached" || apiErr.Code != "400" || apiErr.StatusCode != 0 {
		t.Errorf("APIError = %+v; want message %q code 400 status 0", apiErr, "Token limit reached")
	}
	if got, want := apiErr.Error(), "error in stream: Token limit reached"; got != want {
		t.Errorf("Error() = %q; want %q", got, want)
	}
}

// errAPI stands for "an *APIError" in test tables.
var errAPI = errors.New("api error")

func TestParseResponse(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantErr    error // matched with errors.Is; nil means success
		text       string
		calls      int
		echo       string // expected echoed message, compared as JSON
		stopReason string
	}{
		{
			name:    "not JSON",
			body:    `<html><title>502</title></html>`,
			wantErr: providers.ErrMalformed,
		},
		{
			name:    "no choices",
			body:    `{"id":"x","object":"chat.completion","choices":[]}`,
			wantErr: providers.ErrMalformed,
		},
		{
			name:    "choices without message",
			body:    `{"choices":[{"index":0,"finish_reason":"stop"}]}`,
			wantErr: providers.ErrMalformed,
		},
		{
			name:    "call without a name",
			body:    `{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"arguments":"{}"}}]}}]}`,
			wantErr: providers.ErrMalformed,
		},
		{
			name:    "error on the choice",
			body:    `{"choices":[{"index":0,"finish_reason":"error","error":{"code":429,"message":"rate limited upstream"},"message":{"role":"assistant","content":""}}]}`,
			wantErr: errAPI,
		},
		{
			name:       "content as text parts",
			body:       `{"choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"Hello, "},{"type":"text","text":"world"}],"refusal":null},"finish_reason":"stop"}]}`,
			text:       "Hello, world",
			echo:       `{"role":"assistant","content":[{"type":"text","text":"Hello, "},{"type":"text","text":"world"}]}`,
			stopReason: "stop",
		},
		{
			name:       "null content and no calls",
			body:       `{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"length"}]}`,
			echo:       `{"role":"assistant","content":""}`,
			stopReason: "length",
		},
		{
			name:       "empty arguments become {} in the call and the echo",
			body:       `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"now","arguments":""}}]},"finish_reason":"tool_calls"}]}`,
			calls:      1,
			echo:       `{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"now","arguments":"{}"}}]}`,
			stopReason: "tool_calls",
		},
		{
			name: "second choice ignored",
			body: `{"choices":[{"index":1,"message":{"role":"assistant","content":"B"}},{"index":0,"message":{"role":"assistant","content":"A"}}]}`,
			text: "A",
			echo: `{"role":"assistant","content":"A"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn, err := New().ParseResponse([]byte(tt.body))
			if tt.wantErr == errAPI {
				var apiErr *providers.APIError
				if !errors.As(err, &apiErr) {
					t.Fatalf("error = %v; want an *APIError", err)
				}
				return
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v; want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if turn.Text != tt.text || len(turn.Calls) != tt.calls || turn.StopReason != tt.stopReason {
				t.Errorf("turn = text %q, %d calls, stop %q; want %q, %d, %q", turn.Text, len(turn.Calls), turn.StopReason, tt.text, tt.calls, tt.stopReason)
			}
			providertest.SameJSON(t, "echo", turn.Messages[0], []byte(tt.echo))
		})
	}
}

// TestGeneratedIDs checks that calls sent with an empty or missing id get
// deterministic ids, and that the echo carries the same ones.
func TestGeneratedIDs(t *testing.T) {
	body := providertest.Read(t, "openai-chat/pydantic-compatible-tool-calls-without-id.json")
	first, err := New().ParseResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	again, err := New().ParseResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Calls) != 1 || first.Calls[0].ID == "" {
		t.Fatalf("calls = %+v; want one call with a generated id", first.Calls)
	}
	if want := providers.GeneratedID(body, 0); first.Calls[0].ID != want {
		t.Errorf("id = %q; want %q", first.Calls[0].ID, want)
	}
	if first.Calls[0].ID != again.Calls[0].ID {
		t.Errorf("ids differ between two parses: %q, %q", first.Calls[0].ID, again.Calls[0].ID)
	}
	if got := gjson.GetBytes(first.Messages[0], "tool_calls.0.id").String(); got != first.Calls[0].ID {
		t.Errorf("echoed id = %q; want %q", got, first.Calls[0].ID)
	}
	// Gemini's OpenAI-compatible endpoint puts its thought signature on the
	// message twice; both travel back untouched.
	msg := gjson.GetBytes(body, "choices.0.message")
	for _, field := range []string{"thought_signature", "extra_content"} {
		if got, want := gjson.GetBytes(first.Messages[0], field).Raw, msg.Get(field).Raw; got != want {
			t.Errorf("echoed %s = %s; want %s", field, got, want)
		}
	}

	// A stream without ids: ids come from the stream's bytes.
	sse := "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}},{\"index\":1,\"id\":\"\",\"function\":{\"name\":\"b\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"
	s1, err := New().ParseToolCalls([]byte(sse))
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := New().ParseToolCalls([]byte(sse))
	if len(s1) != 2 || s1[0].ID == "" || s1[1].ID == "" || s1[0].ID == s1[1].ID || s1[0] != s2[0] || s1[1] != s2[1] {
		t.Errorf("stream ids = %+v then %+v; want two distinct, stable ids", s1, s2)
	}
}

func TestFormatTools(t *testing.T) {
	p := New()
	got, err := p.FormatTools(nil)
	if err != nil || got != nil {
		t.Errorf("FormatTools(nil) = %s, %v; want nil, nil", got, err)
	}
	got, err = p.FormatTools([]providers.Tool{
		{Name: "read_file", Description: "Read a file <path> & more", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "now"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"function","function":{"name":"read_file","description":"Read a file <path> & more","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},` +
		`{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}]`
	if string(got) != want {
		t.Errorf("FormatTools =\n%s\nwant\n%s", got, want)
	}
	// The standardized tools format is this protocol's own.
	std, err := providers.MarshalTools([]providers.Tool{{Name: "now", Description: "d"}})
	if err != nil {
		t.Fatal(err)
	}
	mine, _ := p.FormatTools([]providers.Tool{{Name: "now", Description: "d"}})
	providertest.SameJSON(t, "standardized tools", mine, std)

	if _, err := p.FormatTools([]providers.Tool{{Name: "bad", Parameters: json.RawMessage(`{`)}}); err == nil {
		t.Error("FormatTools accepted invalid parameters")
	}
	if _, err := p.FormatTools([]providers.Tool{{Description: "no name"}}); err == nil {
		t.Error("FormatTools accepted a tool without a name")
	}
}

func TestUserMessage(t *testing.T) {
	got, err := New().UserMessage("a <b> & \"c\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"role":"user","content":"a <b> & \"c\"\n"}`; string(got) != want {
		t.Errorf("UserMessage = %s; want %s", got, want)
	}
}

func TestFormatToolResults(t *testing.T) {
	tests := []struct {
		name   string
		result providers.ToolResult
		want   string
	}{
		{"success", providers.ToolResult{ID: "call_1", Name: "add", Content: "5"},
			`{"role":"tool","tool_call_id":"call_1","content":"5"}`},
		{"error gets a prefix", providers.ToolResult{ID: "functions.add:0", Name: "add", Content: "no such file", IsError: true},
			`{"role":"tool","tool_call_id":"functions.add:0","content":"Error: no such file"}`},
		{"error that says so already", providers.ToolResult{ID: "c", Content: "error: denied by policy", IsError: true},
			`{"role":"tool","tool_call_id":"c","content":"error: denied by policy"}`},
		{"Error prefix kept once", providers.ToolResult{ID: "c", Content: "Error: boom", IsError: true},
			`{"role":"tool","tool_call_id":"c","content":"Error: boom"}`},
		{"empty error", providers.ToolResult{ID: "c", IsError: true},
			`{"role":"tool","tool_call_id":"c","content":"Error: "}`},
		{"a success that starts with error is left alone", providers.ToolResult{ID: "c", Content: "errors.go"},
			`{"role":"tool","tool_call_id":"c","content":"errors.go"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New().FormatToolResults([]providers.ToolResult{tt.result})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || string(got[0]) != tt.want {
				t.Errorf("FormatToolResults = %s; want %s", got, tt.want)
			}
		})
	}
	got, err := New().FormatToolResults([]providers.ToolResult{{ID: "a", Content: "1"}, {ID: "b", Content: "2"}})
	if err != nil || len(got) != 2 || gjson.GetBytes(got[1], "tool_call_id").String() != "b" {
		t.Errorf("two results = %s, %v; want them in order", got, err)
	}
	if _, err := New().FormatToolResults([]providers.ToolResult{{Content: "x"}}); err == nil {
		t.Error("a result without an id was accepted")
	}
}

func TestBuildRequest(t *testing.T) {
	user := json.RawMessage(`{"role":"user","content":"hi"}`)
	tools := []providers.Tool{{Name: "now", Description: "time"}}
	toolsJSON := `[{"type":"function","function":{"name":"now","description":"time","parameters":{"type":"object","properties":{}}}}]`
	tests := []struct {
		name string
		req  providers.Request
		want string
	}{
		{"minimal", providers.Request{Model: "m", Messages: []json.RawMessage{user}},
			`{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"system, tools, stream, max tokens", providers.Request{Model: "m", System: "be brief", Messages: []json.RawMessage{user}, Tools: tools, Stream: true, MaxTokens: 300},
			`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"tools":` + toolsJSON + `,"stream":true,"stream_options":{"include_usage":true},"max_tokens":300}`},
		{"schema", providers.Request{Model: "m", Messages: []json.RawMessage{user}, Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object","properties":{"city":{"type":"string"}}},"strict":false}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New().BuildRequest(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("BuildRequest =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	bad := []struct {
		name string
		req  providers.Request
	}{
		{"no model", providers.Request{Messages: []json.RawMessage{user}}},
		{"invalid message", providers.Request{Model: "m", Messages: []json.RawMessage{json.RawMessage(`{"role":`)}}},
		{"invalid schema", providers.Request{Model: "m", Schema: json.RawMessage(`{`)}},
	}
	for _, tt := range bad {
		if _, err := New().BuildRequest(tt.req); err == nil {
			t.Errorf("%s: BuildRequest accepted it", tt.name)
		}
	}
}

// TestBuildRecordedRequests rebuilds every recorded first-turn request from
// its own parts and compares it with the recorded body, after dropping the
// fields the clients chose differently (see clientChoices).
func TestBuildRecordedRequests(t *testing.T) {
	for _, name := range requestFixtures(t) {
		if followUps[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			recorded := providertest.Read(t, name)
			got, err := New().BuildRequest(requestFrom(t, recorded))
			if err != nil {
				t.Fatal(err)
			}
			sameValue(t, "request", comparable(t, got), comparable(t, recorded))
		})
	}
}

// TestStreamMatchesResponse checks that a streamed reply echoes the same
// fields as a whole reply of the same server and model.
func TestStreamMatchesResponse(t *testing.T) {
	pairs := []struct{ whole, stream string }{
		{"openai-chat/fantasy-gpt4o-multi-tool.json", "openai-chat/fantasy-gpt4o-multi-tool-stream.sse"},
		{"openrouter/fantasy-anthropic-multi-tool.json", "openrouter/fantasy-anthropic-multi-tool-stream.sse"},
		{"openrouter/fantasy-gemini-tool.json", "openrouter/fantasy-gemini-multi-tool-stream.sse"},
		{"openrouter/fantasy-kimi-multi-tool.json", "openrouter/fantasy-kimi-multi-tool-stream.sse"},
		{"local-openai-compat/fantasy-llamacpp-gptoss-tool.json", "local-openai-compat/fantasy-llamacpp-gptoss-tool-stream.sse"},
		{"moonshot-kimi/fantasy-hf-kimi-k2-multi-tool.json", "moonshot-kimi/fantasy-hf-kimi-k2-tool-stream.sse"},
	}
	shape := func(t *testing.T, name string) (msgKeys, callKeys, detailKeys string) {
		turn, err := parseFixture(t, name)
		if err != nil {
			t.Fatal(err)
		}
		msg := gjson.ParseBytes(turn.Messages[0])
		keys := func(r gjson.Result) string {
			var ks []string
			r.ForEach(func(k, _ gjson.Result) bool { ks = append(ks, k.String()); return true })
			slices.Sort(ks)
			return strings.Join(ks, ",")
		}
		return keys(msg), keys(msg.Get("tool_calls.0")), keys(msg.Get("reasoning_details.0"))
	}
	for _, tt := range pairs {
		t.Run(tt.stream, func(t *testing.T) {
			wm, wc, wd := shape(t, tt.whole)
			sm, sc, sd := shape(t, tt.stream)
			// Kimi via Groq/HF writes a preamble with its calls in the
			// whole reply and none in the stream: content is the model's
			// choice there, not the protocol's.
			if strings.HasPrefix(tt.whole, "moonshot-kimi/") {
				wm = strings.Replace(wm, "content,", "", 1)
			}
			if sm != wm || sc != wc || sd != wd {
				t.Errorf("stream echo fields (%s | %s | %s) differ from whole reply (%s | %s | %s)", sm, sc, sd, wm, wc, wd)
			}
		})
	}
}

// An id that is not valid UTF-8 reaches the provider quoted, as valid
// UTF-8, in the call's result; the call and its echo carry it the same
// way, from a whole response and from a stream, so that the two agree.
func TestInvalidUTF8CallID(t *testing.T) {
	const want = "call_\uFFFD1"
	whole := []byte("{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_\x801\",\"type\":\"function\",\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}")
	stream := []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_\x801\",\"type\":\"function\",\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
	for name, body := range map[string][]byte{"whole": whole, "stream": stream} {
		turn, err := providers.ParseBody(New(), body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(turn.Calls) != 1 || turn.Calls[0].ID != want {
			t.Errorf("%s: calls %+v; want one with id %q", name, turn.Calls, want)
		}
		if got := gjson.GetBytes(turn.Messages[0], "tool_calls.0.id").String(); got != want {
			t.Errorf("%s: echoed id %q; want %q", name, got, want)
		}
	}
}
