package ollama

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
	"github.com/tidwall/gjson"
)

func TestIdentity(t *testing.T) {
	p := New()
	if got := p.Name(); got != "ollama" {
		t.Errorf("Name() = %q, want ollama", got)
	}
	if got := p.Framing(); got != providers.NDJSON {
		t.Errorf("Framing() = %v, want NDJSON", got)
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct{ base, want string }{
		{"http://localhost:11434", "http://localhost:11434/api/chat"},
		{"http://localhost:11434/", "http://localhost:11434/api/chat"},
		{"http://127.0.0.1:11434//", "http://127.0.0.1:11434/api/chat"},
		{"https://ollama.com/api", "https://ollama.com/api/chat"},
		{"https://ollama.com/api/", "https://ollama.com/api/chat"},
		{"http://gpu-box:8080/ollama", "http://gpu-box:8080/ollama/api/chat"},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			if got := New().Endpoint(tt.base, "llama3.2", stream); got != tt.want {
				t.Errorf("Endpoint(%q, stream %v) = %q, want %q", tt.base, stream, got, tt.want)
			}
		}
	}
}

func TestAuthorize(t *testing.T) {
	tests := []struct{ name, key, want string }{
		{"local server, no key", "", ""},
		{"ollama.com key", "abc123", "Bearer abc123"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			New().Authorize(h, tt.key)
			if got := h.Get("Authorization"); got != tt.want {
				t.Errorf("Authorization = %q, want %q", got, tt.want)
			}
			if tt.key == "" && len(h) != 0 {
				t.Errorf("headers set without a key: %v", h)
			}
		})
	}
}

func TestFormatTools(t *testing.T) {
	tests := []struct {
		name    string
		tools   []providers.Tool
		want    string // "" means nil
		wantErr bool
	}{
		{"none", nil, "", false},
		{"with schema", []providers.Tool{{Name: "weather", Description: "Get weather", Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}},
			`[{"type":"function","function":{"name":"weather","description":"Get weather","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}}]`, false},
		{"no parameters gets an empty object schema (the spec requires one)", []providers.Tool{{Name: "now"}},
			`[{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}]`, false},
		{"no name", []providers.Tool{{Description: "x"}}, "", true},
		{"invalid schema", []providers.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":`)}}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New().FormatTools(tt.tools)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.want == "" {
				if got != nil {
					t.Errorf("got %s, want nil", got)
				}
				return
			}
			providertest.SameJSON(t, "tools", got, []byte(tt.want))
		})
	}
}

func TestUserMessage(t *testing.T) {
	got, err := New().UserMessage(`why <b> & "quotes"?`)
	if err != nil {
		t.Fatal(err)
	}
	// Byte for byte: no HTML escaping of the user's text.
	if want := `{"role":"user","content":"why <b> & \"quotes\"?"}`; string(got) != want {
		t.Errorf("UserMessage = %s, want %s", got, want)
	}
}

func TestFormatToolResults(t *testing.T) {
	tests := []struct {
		name    string
		results []providers.ToolResult
		want    []string
	}{
		{"one result", []providers.ToolResult{{ID: "call_1", Name: "weather", Content: "40 C"}},
			[]string{`{"role":"tool","tool_name":"weather","tool_call_id":"call_1","content":"40 C"}`}},
		{"parallel results keep their order", []providers.ToolResult{
			{ID: "call_a", Name: "add", Content: "5"},
			{ID: "call_m", Name: "multiply", Content: "6"},
		}, []string{
			`{"role":"tool","tool_name":"add","tool_call_id":"call_a","content":"5"}`,
			`{"role":"tool","tool_name":"multiply","tool_call_id":"call_m","content":"6"}`,
		}},
		{"failure is prefixed", []providers.ToolResult{{ID: "c", Name: "read_file", Content: "no such file", IsError: true}},
			[]string{`{"role":"tool","tool_name":"read_file","tool_call_id":"c","content":"Error: no such file"}`}},
		{"failure already prefixed", []providers.ToolResult{{ID: "c", Name: "f", Content: "error: denied by policy", IsError: true}},
			[]string{`{"role":"tool","tool_name":"f","tool_call_id":"c","content":"error: denied by policy"}`}},
		{"no id, no tool_call_id", []providers.ToolResult{{Name: "f", Content: "ok"}},
			[]string{`{"role":"tool","tool_name":"f","content":"ok"}`}},
		{"text kept byte for byte", []providers.ToolResult{{ID: "c", Name: "f", Content: "a<b & c>d\n\"é\""}},
			[]string{`{"role":"tool","tool_name":"f","tool_call_id":"c","content":"a<b & c>d\n\"é\""}`}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New().FormatToolResults(tt.results)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d messages, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if string(got[i]) != tt.want[i] {
					t.Errorf("message %d = %s, want %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestBuildRequest(t *testing.T) {
	user := json.RawMessage(`{"role":"user","content":"hi"}`)
	tool := providers.Tool{Name: "f", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
	tests := []struct {
		name    string
		req     providers.Request
		want    string
		wantErr bool
	}{
		{"stream false is explicit", providers.Request{Model: "m", Messages: []json.RawMessage{user}},
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":false}`, false},
		{"stream true", providers.Request{Model: "m", Messages: []json.RawMessage{user}, Stream: true},
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`, false},
		{"system first, tools, cap, schema", providers.Request{
			Model: "m", System: "be brief", Messages: []json.RawMessage{user}, Tools: []providers.Tool{tool},
			MaxTokens: 256, Schema: json.RawMessage(`{"type":"object"}`),
		}, `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],` +
			`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}],` +
			`"stream":false,"options":{"num_predict":256},"format":{"type":"object"}}`, false},
		{"no model", providers.Request{Messages: []json.RawMessage{user}}, "", true},
		{"history item not JSON", providers.Request{Model: "m", Messages: []json.RawMessage{json.RawMessage(`{"role":`)}}, "", true},
		{"history item not an object", providers.Request{Model: "m", Messages: []json.RawMessage{json.RawMessage(`"hi"`)}}, "", true},
		{"schema not an object", providers.Request{Model: "m", Messages: []json.RawMessage{user}, Schema: json.RawMessage(`"json"`)}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New().BuildRequest(tt.req)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				if !strings.HasPrefix(err.Error(), "ollama: build request: ") {
					t.Errorf("error %q lacks its context", err)
				}
				return
			}
			providertest.SameJSON(t, "request", got, []byte(tt.want))
			for _, absent := range []string{"tool_choice", "max_tokens"} {
				if gjson.GetBytes(got, absent).Exists() {
					t.Errorf("request has %s, which Ollama does not know", absent)
				}
			}
		})
	}
}

// TestHistoryEchoedVerbatim checks that history items are copied byte for
// byte: key order, spacing and escapes are the model's, not ours.
func TestHistoryEchoedVerbatim(t *testing.T) {
	item := json.RawMessage(`{"role":"assistant", "content":"", "thinking":"a<b \u00e9",` +
		`"tool_calls":[{"id":"x","function":{"name":"f","arguments":{"z":1,"a":2}}}]}`)
	got, err := New().BuildRequest(providers.Request{Model: "m", Messages: []json.RawMessage{item}})
	if err != nil {
		t.Fatal(err)
	}
	if raw := gjson.GetBytes(got, "messages.0").Raw; raw != string(item) {
		t.Errorf("history item became %s, want %s", raw, item)
	}
}

func TestStreamText(t *testing.T) {
	body := ndjson(
		`{"model":"m","message":{"role":"assistant","content":"","thinking":"Let me"},"done":false}`,
		`{"model":"m","message":{"role":"assistant","content":"","thinking":" think."},"done":false}`,
		`{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}`,
		`{"model":"m","message":{"role":"assistant","content":"lo <b>"},"done":false}`,
		`{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":3,"eval_count":9}`,
		`{"model":"m","message":{"role":"assistant","content":"after the end"},"done":false}`,
	)
	turn, deltas, err := providertest.Deltas(New(), body)
	if err != nil {
		t.Fatal(err)
	}
	checkTurn(t, turn)
	want := record(&providers.Turn{
		Text: "Hello <b>", Reasoning: "Let me think.", StopReason: "length",
		Usage:    providers.Usage{InputTokens: 3, OutputTokens: 9, TotalTokens: 12},
		Messages: []json.RawMessage{json.RawMessage(`{"role":"assistant","content":"Hello <b>","thinking":"Let me think."}`)},
	}, []string{"Hel", "lo <b>"})
	providertest.SameJSON(t, "turn", providertest.Marshal(t, record(turn, deltas)), providertest.Marshal(t, want))
}

// TestCallsWithoutIDs covers servers older than call ids: ids are generated,
// distinct, stable across re-reads, and the same in Calls and in the echo.
func TestCallsWithoutIDs(t *testing.T) {
	stream := ndjson(
		`{"model":"m","created_at":"t1","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"add","arguments":{"a":2,"b":3}}}]},"done":false}`,
		`{"model":"m","created_at":"t2","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"multiply","arguments":{"a":2,"b":3}}}]},"done":false}`,
		`{"model":"m","created_at":"t3","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}`,
	)
	response := []byte(`{"model":"m","message":{"role":"assistant","content":"","tool_calls":[` +
		`{"function":{"name":"add","arguments":{"a":2,"b":3}}},{"function":{"name":"multiply"}}]},"done":true,"done_reason":"stop"}`)
	tests := []struct {
		name  string
		parse func() (*providers.Turn, error)
	}{
		{"stream", func() (*providers.Turn, error) { turn, _, err := providertest.Deltas(New(), stream); return turn, err }},
		{"response", func() (*providers.Turn, error) { return New().ParseResponse(response) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, err := tt.parse()
			if err != nil {
				t.Fatal(err)
			}
			again, err := tt.parse()
			if err != nil {
				t.Fatal(err)
			}
			checkTurn(t, first)
			if len(first.Calls) != 2 {
				t.Fatalf("%d calls, want 2", len(first.Calls))
			}
			if first.Calls[0].ID == first.Calls[1].ID {
				t.Errorf("both calls got id %q", first.Calls[0].ID)
			}
			for i := range first.Calls {
				if first.Calls[i].ID != again.Calls[i].ID {
					t.Errorf("call %d: id %q then %q, want stable", i, first.Calls[i].ID, again.Calls[i].ID)
				}
			}
		})
	}
	// A call without arguments gets "{}" in both directions.
	turn, err := New().ParseResponse(response)
	if err != nil {
		t.Fatal(err)
	}
	if got := turn.Calls[1].Arguments; got != "{}" {
		t.Errorf("missing arguments = %q, want {}", got)
	}
}

func TestArgumentShapes(t *testing.T) {
	tests := []struct {
		name     string
		args     string
		wantText string // Turn.Calls[0].Arguments
		wantEcho string // arguments in the echoed message
		wantErr  bool
	}{
		{"object kept raw", `{"b": 1, "a": [2]}`, `{"b": 1, "a": [2]}`, `{"b": 1, "a": [2]}`, false},
		{"null", `null`, `{}`, `{}`, false},
		{"string holding an object (a proxy's)", `"{\"a\":1}"`, `{"a":1}`, `{"a":1}`, false},
		{"string holding broken JSON survives for the loop", `"{\"a\":"`, `{"a":`, `{}`, false},
		{"array is not arguments", `[1]`, ``, ``, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(`{"message":{"role":"assistant","content":"","tool_calls":[{"id":"c","function":{"name":"f","arguments":` + tt.args + `}}]},"done":true}`)
			turn, err := New().ParseResponse(body)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				if !errors.Is(err, providers.ErrMalformed) {
					t.Errorf("err = %v, want ErrMalformed", err)
				}
				return
			}
			if got := turn.Calls[0].Arguments; got != tt.wantText {
				t.Errorf("Arguments = %q, want %q", got, tt.wantText)
			}
			if got := gjson.GetBytes(turn.Messages[0], "tool_calls.0.function.arguments").Raw; got != tt.wantEcho {
				t.Errorf("echoed arguments = %s, want %s", got, tt.wantEcho)
			}
		})
	}
}

func TestStreamErrors(t *testing.T) {
	head := `{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}`
	tests := []struct {
		name    string
		body    []byte
		wantAPI string // message of the *APIError, if one is expected
		wantIs  error
	}{
		{"error line under a 200", ndjson(head, `{"error":"an error was encountered while running the model: unexpected EOF"}`),
			"an error was encountered while running the model: unexpected EOF", nil},
		{"cut before done:true", ndjson(head), "", providers.ErrStreamCut},
		{"empty body", nil, "", providers.ErrStreamCut},
		{"line is not JSON", ndjson(head, `{"message":`), "", providers.ErrMalformed},
		{"line is not an object", ndjson(head, `42`), "", providers.ErrMalformed},
		{"call without a name", ndjson(`{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"arguments":{}}}]},"done":false}`), "", providers.ErrMalformed},
		{"tool_calls not an array", ndjson(`{"message":{"role":"assistant","content":"","tool_calls":{}},"done":false}`), "", providers.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := providertest.Deltas(New(), tt.body)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v, want %v", err, tt.wantIs)
			}
			if tt.wantAPI == "" {
				return
			}
			var apiErr *providers.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %T %v, want *providers.APIError", err, err)
			}
			if apiErr.Message != tt.wantAPI || apiErr.StatusCode != 0 {
				t.Errorf("APIError = %+v, want status 0 and message %q", apiErr, tt.wantAPI)
			}
		})
	}
}

func TestParseResponseErrors(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantAPI string
		wantIs  error
	}{
		{"error object under a 200", `{"error":"model runner has unexpectedly stopped"}`, "model runner has unexpectedly stopped", nil},
		{"not JSON", `<html>`, "", providers.ErrMalformed},
		{"no message", `{"done":true}`, "", providers.ErrMalformed},
		{"two lines of a stream", `{"message":{"content":""},"done":false}` + "\n" + `{"done":true}`, "", providers.ErrMalformed},
		{"one line of a cut stream", `{"message":{"content":"","tool_calls":[{"function":{"name":"f"}}]},"done":false}`, "", providers.ErrStreamCut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New().ParseResponse([]byte(tt.body))
			if err == nil {
				t.Fatal("no error")
			}
			var apiErr *providers.APIError
			if tt.wantAPI == "" {
				if !errors.Is(err, tt.wantIs) {
					t.Errorf("err = %v, want %v", err, tt.wantIs)
				}
				return
			}
			if !errors.As(err, &apiErr) || apiErr.Message != tt.wantAPI {
				t.Errorf("err = %v, want an APIError saying %q", err, tt.wantAPI)
			}
		})
	}
}

// TestDecodeError checks that Ollama's {"error":"string"} bodies decode with
// the shared decoder the caller uses for non-2xx statuses.
func TestDecodeError(t *testing.T) {
	tests := []struct {
		status              int
		body                string
		wantMsg             string
		wantAuth, wantRetry bool
	}{
		{404, `{"error":"model \"llama9\" not found, try pulling it first"}`, `model "llama9" not found, try pulling it first`, false, false},
		{400, `{"error":"registry.ollama.ai/library/gemma:2b does not support tools"}`, "registry.ollama.ai/library/gemma:2b does not support tools", false, false},
		{401, `{"error":"unauthorized"}`, "unauthorized", true, false},
		{429, `{"error":"too many requests"}`, "too many requests", false, true},
		{500, `{"error":"llama runner process has terminated: exit status 2"}`, "llama runner process has terminated: exit status 2", false, true},
	}
	for _, tt := range tests {
		e := providers.DecodeError(tt.status, []byte(tt.body))
		if e.Message != tt.wantMsg || e.StatusCode != tt.status {
			t.Errorf("DecodeError(%d, %s) = %+v, want message %q", tt.status, tt.body, e, tt.wantMsg)
		}
		if e.IsAuth() != tt.wantAuth || e.Retryable() != tt.wantRetry {
			t.Errorf("%d: IsAuth %v Retryable %v, want %v %v", tt.status, e.IsAuth(), e.Retryable(), tt.wantAuth, tt.wantRetry)
		}
	}
}

// TestParseToolCallsPrettyResponse guards the workaround for
// providers.IsStreamBody, which takes a pretty-printed response for NDJSON.
func TestParseToolCallsPrettyResponse(t *testing.T) {
	body := []byte("{\n  \"message\": {\"role\": \"assistant\", \"content\": \"done\"},\n  \"done\": true\n}\n")
	calls, err := New().ParseToolCalls(body)
	if err != nil {
		t.Fatal(err)
	}
	if calls == nil || len(calls) != 0 {
		t.Errorf("calls = %#v, want an empty non-nil list", calls)
	}
}
