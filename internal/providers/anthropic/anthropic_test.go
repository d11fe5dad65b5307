package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

func TestBasics(t *testing.T) {
	p := New()
	if got := p.Name(); got != "anthropic" {
		t.Errorf("Name() = %q, want anthropic", got)
	}
	if got := p.Framing(); got != providers.SSE {
		t.Errorf("Framing() = %v, want SSE", got)
	}
	for _, base := range []string{"https://api.anthropic.com/v1", "https://api.anthropic.com/v1/"} {
		if got, want := p.Endpoint(base, "claude-x", true), "https://api.anthropic.com/v1/messages"; got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", base, got, want)
		}
	}
}

func TestAuthorize(t *testing.T) {
	tests := []struct {
		name, key, wantKey string
	}{
		{"with key", "fake-ant-test", "fake-ant-test"},
		{"no key", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			New().Authorize(h, tt.key)
			if got := h.Get("x-api-key"); got != tt.wantKey {
				t.Errorf("x-api-key = %q, want %q", got, tt.wantKey)
			}
			if _, set := h["X-Api-Key"]; set != (tt.key != "") {
				t.Errorf("x-api-key present = %v, want %v", set, tt.key != "")
			}
			if got := h.Get("anthropic-version"); got != "2023-06-01" {
				t.Errorf("anthropic-version = %q, want 2023-06-01", got)
			}
			if got := h.Get("Authorization"); got != "" {
				t.Errorf("Authorization = %q, want none", got)
			}
		})
	}
}

func TestFormatTools(t *testing.T) {
	tests := []struct {
		name  string
		tools []providers.Tool
		want  string // "" means nil
	}{
		{"none", nil, ""},
		{"full", []providers.Tool{{Name: "read_file", Description: "Read <a> & b", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}},
			`[{"name":"read_file","description":"Read <a> & b","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]`},
		{"no parameters, no description", []providers.Tool{{Name: "now"}},
			`[{"name":"now","input_schema":{"type":"object","properties":{}}}]`},
		{"two", []providers.Tool{{Name: "a", Parameters: json.RawMessage(`null`)}, {Name: "b"}},
			`[{"name":"a","input_schema":{"type":"object","properties":{}}},{"name":"b","input_schema":{"type":"object","properties":{}}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New().FormatTools(tt.tools)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if got != nil {
					t.Errorf("FormatTools = %s, want nil", got)
				}
				return
			}
			// Byte comparison: key order and unescaped text are part of the
			// contract.
			if string(got) != tt.want {
				t.Errorf("FormatTools =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestFormatToolsErrors(t *testing.T) {
	tests := []struct {
		name  string
		tools []providers.Tool
	}{
		{"no name", []providers.Tool{{Description: "x"}}},
		{"invalid schema", []providers.Tool{{Name: "x", Parameters: json.RawMessage(`{"type":`)}}},
	}
	for _, tt := range tests {
		if _, err := New().FormatTools(tt.tools); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestUserMessage(t *testing.T) {
	got, err := New().UserMessage("why does <make> fail & \"stop\"?\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"role":"user","content":"why does <make> fail & \"stop\"?\n"}`; string(got) != want {
		t.Errorf("UserMessage = %s, want %s", got, want)
	}
}

func TestFormatToolResults(t *testing.T) {
	tests := []struct {
		name    string
		results []providers.ToolResult
		want    string // "" means no message
	}{
		{"none", nil, ""},
		{"one ok", []providers.ToolResult{{ID: "toolu_1", Name: "f", Content: "40 C"}},
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"40 C"}]}`},
		{"error and ok in one message", []providers.ToolResult{
			{ID: "toolu_1", Name: "f", Content: "boom", IsError: true},
			{ID: "toolu_2", Name: "g", Content: "<ok> & done"},
		}, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"boom","is_error":true},{"type":"tool_result","tool_use_id":"toolu_2","content":"<ok> & done"}]}`},
		{"empty content left out", []providers.ToolResult{{ID: "toolu_1", Name: "f"}},
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New().FormatToolResults(tt.results)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if len(got) != 0 {
					t.Errorf("FormatToolResults = %s, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("FormatToolResults gave %d messages, want 1", len(got))
			}
			if string(got[0]) != tt.want {
				t.Errorf("FormatToolResults =\n%s\nwant\n%s", got[0], tt.want)
			}
		})
	}
	if _, err := New().FormatToolResults([]providers.ToolResult{{Name: "f", Content: "x"}}); err == nil {
		t.Error("a result without id gave no error")
	}
}

func TestBuildRequest(t *testing.T) {
	user := json.RawMessage(`{"role":"user","content":"hi"}`)
	tools := []providers.Tool{{Name: "now"}}
	schema := json.RawMessage("{\n  \"type\": \"object\",\n  \"required\": [\"answer\"]\n}")
	tests := []struct {
		name string
		req  providers.Request
		want string
	}{
		{"minimal: default max_tokens, no system, no stream",
			providers.Request{Model: "claude-sonnet-4-5", Messages: []json.RawMessage{user}},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}]}`},
		{"everything",
			providers.Request{Model: "m", System: "Be brief.", Messages: []json.RawMessage{user, user}, Tools: tools, Stream: true, MaxTokens: 100},
			`{"model":"m","max_tokens":100,"system":"Be brief.","messages":[{"role":"user","content":"hi"},{"role":"user","content":"hi"}],"tools":[{"name":"now","input_schema":{"type":"object","properties":{}}}],"stream":true}`},
		{"schema as native structured output",
			providers.Request{Model: "claude-sonnet-4-5", System: "Be brief.", Messages: []json.RawMessage{user}, Schema: schema},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"system":"Be brief.","messages":[{"role":"user","content":"hi"}],"output_config":{"format":{"type":"json_schema","schema":{"additionalProperties":false,"required":["answer"],"type":"object"}}}}`},
		{"schema appended to system for an older model",
			providers.Request{Model: "claude-opus-4-1-20250805", System: "Be brief.", Messages: []json.RawMessage{user}, Schema: schema},
			`{"model":"claude-opus-4-1-20250805","max_tokens":8192,"system":"Be brief.\n\n` + jsonEscape(providers.SchemaInstruction) + `{\"type\":\"object\",\"required\":[\"answer\"]}","messages":[{"role":"user","content":"hi"}]}`},
		{"schema without system, older model",
			providers.Request{Model: "claude-3-5-haiku-latest", Messages: []json.RawMessage{user}, Schema: schema},
			`{"model":"claude-3-5-haiku-latest","max_tokens":8192,"system":"` + jsonEscape(providers.SchemaInstruction) + `{\"type\":\"object\",\"required\":[\"answer\"]}","messages":[{"role":"user","content":"hi"}]}`},
		{"schema with an open map goes into the system prompt",
			providers.Request{Model: "claude-sonnet-4-5", Messages: []json.RawMessage{user}, Schema: json.RawMessage(`{"type":"object","additionalProperties":{"type":"number"}}`)},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"system":"` + jsonEscape(providers.SchemaInstruction) + `{\"type\":\"object\",\"additionalProperties\":{\"type\":\"number\"}}","messages":[{"role":"user","content":"hi"}]}`},
		{"no messages",
			providers.Request{Model: "m"},
			`{"model":"m","max_tokens":8192,"messages":[]}`},
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
}

func jsonEscape(s string) string {
	q := string(providers.Quote(s))
	return q[1 : len(q)-1]
}

func TestBuildRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		req  providers.Request
	}{
		{"invalid message", providers.Request{Model: "m", Messages: []json.RawMessage{json.RawMessage(`{"role":`)}}},
		{"empty message", providers.Request{Model: "m", Messages: []json.RawMessage{nil}}},
		{"invalid schema", providers.Request{Model: "m", Schema: json.RawMessage(`{`)}},
		{"invalid tool schema", providers.Request{Model: "m", Tools: []providers.Tool{{Name: "x", Parameters: json.RawMessage(`[`)}}}},
	}
	for _, tt := range tests {
		if _, err := New().BuildRequest(tt.req); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestParseResponseErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       error
	}{
		{"not JSON", `<html>bad gateway</html>`, providers.ErrMalformed},
		{"truncated", `{"content":[{"type":"text","text":"hi"}`, providers.ErrMalformed},
		{"no content", `{"type":"message","role":"assistant"}`, providers.ErrMalformed},
		{"content not an array", `{"content":"hi"}`, providers.ErrMalformed},
		{"tool_use without name", `{"content":[{"type":"tool_use","id":"toolu_1","input":{}}]}`, providers.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New().ParseResponse([]byte(tt.body))
			if !errors.Is(err, tt.want) {
				t.Errorf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestParseResponseErrorBody(t *testing.T) {
	body := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	_, err := New().ParseResponse([]byte(body))
	var apiErr *providers.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v, want an *APIError", err)
	}
	if apiErr.Type != "overloaded_error" || apiErr.Message != "Overloaded" {
		t.Errorf("APIError = %+v", apiErr)
	}
}

// TestParseResponseGeneratesMissingIDs: a tool_use block without id gets a
// stable generated one, the same in the call and in the echoed block; other
// blocks, redacted_thinking included, stay as they were.
func TestParseResponseGeneratesMissingIDs(t *testing.T) {
	body := []byte(`{"content":[{"type":"redacted_thinking","data":"EmwKAhgB"},{"type":"tool_use","name":"now","input":{}},{"type":"tool_use","id":"","name":"later"}],"stop_reason":"tool_use"}`)
	turn, err := New().ParseResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Calls) != 2 {
		t.Fatalf("%d calls, want 2", len(turn.Calls))
	}
	blocks := gjson.GetBytes(turn.Messages[0], "content").Array()
	if got, want := blocks[0].Raw, `{"type":"redacted_thinking","data":"EmwKAhgB"}`; got != want {
		t.Errorf("redacted_thinking echoed as %s, want %s", got, want)
	}
	for i, c := range turn.Calls {
		if c.ID == "" || !strings.HasPrefix(c.ID, "call_") {
			t.Errorf("call %d id = %q, want a generated id", i, c.ID)
		}
		if got := blocks[i+1].Get("id").String(); got != c.ID {
			t.Errorf("echoed block %d id = %q, call id = %q", i+1, got, c.ID)
		}
	}
	if turn.Calls[0].ID == turn.Calls[1].ID {
		t.Errorf("two calls share id %q", turn.Calls[0].ID)
	}
	if got := turn.Calls[1].Arguments; got != "{}" {
		t.Errorf("missing input gives arguments %q, want {}", got)
	}
	again, err := New().ParseResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	if again.Calls[0].ID != turn.Calls[0].ID {
		t.Errorf("generated id is not stable: %q then %q", turn.Calls[0].ID, again.Calls[0].ID)
	}
}

func TestParseResponseUsage(t *testing.T) {
	body := `{"content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":7}}`
	turn, err := New().ParseResponse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Usage{InputTokens: 130, OutputTokens: 7, CacheReadTokens: 100, CacheWriteTokens: 20, TotalTokens: 137}
	if turn.Usage != want {
		t.Errorf("Usage = %+v, want %+v", turn.Usage, want)
	}
	if turn.Text != "hi" || turn.StopReason != "end_turn" || len(turn.Calls) != 0 {
		t.Errorf("turn = %+v", turn)
	}
}

// TestParseResponseEmptyContent: an empty reply is not echoed, since the API
// rejects an assistant message with no content.
func TestParseResponseEmptyContent(t *testing.T) {
	turn, err := New().ParseResponse([]byte(`{"content":[],"stop_reason":"end_turn"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Messages) != 0 {
		t.Errorf("Messages = %s, want none", turn.Messages)
	}
}

// TestMessagesRoundTripThroughBuildRequest: what ParseResponse returns is
// valid history for BuildRequest, unchanged.
func TestMessagesRoundTripThroughBuildRequest(t *testing.T) {
	body := providertest.Read(t, "pydantic-tool-with-thinking.json")
	turn, err := New().ParseResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := New().BuildRequest(providers.Request{Model: "m", Messages: turn.Messages})
	if err != nil {
		t.Fatal(err)
	}
	got := gjson.GetBytes(req, "messages.0.content").Raw
	providertest.SameBytes(t, "echoed content", []byte(got), []byte(gjson.GetBytes(body, "content").Raw))
}
