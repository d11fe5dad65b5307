package gemini

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
	if got := p.Name(); got != "gemini" {
		t.Errorf("Name() = %q, want gemini", got)
	}
	if got := p.Framing(); got != providers.SSE {
		t.Errorf("Framing() = %v, want SSE", got)
	}
}

func TestEndpoint(t *testing.T) {
	const base = "https://generativelanguage.googleapis.com/v1beta"
	tests := []struct {
		base, model string
		stream      bool
		want        string
	}{
		{base, "gemini-2.5-flash", false, base + "/models/gemini-2.5-flash:generateContent"},
		{base + "/", "gemini-2.5-flash", true, base + "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{base, "models/gemini-3-pro-preview", false, base + "/models/gemini-3-pro-preview:generateContent"},
		{base, "tunedModels/my-model-7", true, base + "/tunedModels/my-model-7:streamGenerateContent?alt=sse"},
		{"http://127.0.0.1:8080", "odd name?x", false, "http://127.0.0.1:8080/models/odd%20name%3Fx:generateContent"},
	}
	for _, tt := range tests {
		if got := New().Endpoint(tt.base, tt.model, tt.stream); got != tt.want {
			t.Errorf("Endpoint(%q, %q, %v) = %q, want %q", tt.base, tt.model, tt.stream, got, tt.want)
		}
	}
}

// TestAuthorize: the key travels in x-goog-api-key only, never in the URL
// nor in an Authorization header.
func TestAuthorize(t *testing.T) {
	for _, key := range []string{"AIza-test", ""} {
		h := http.Header{}
		New().Authorize(h, key)
		if got := h.Get("x-goog-api-key"); got != key {
			t.Errorf("x-goog-api-key = %q, want %q", got, key)
		}
		if _, set := h["X-Goog-Api-Key"]; set != (key != "") {
			t.Errorf("key %q: header present = %v", key, set)
		}
		if h.Get("Authorization") != "" {
			t.Errorf("Authorization set: %q", h.Get("Authorization"))
		}
	}
	if u := New().Endpoint("https://x/v1beta", "m", true); strings.Contains(u, "key=") {
		t.Errorf("endpoint %q carries a key parameter", u)
	}
	if got := providers.Redact(http.Header{"X-Goog-Api-Key": {"AIza-secret"}}).Get("x-goog-api-key"); got != "[redacted]" {
		t.Errorf("recorded header shows %q, want it redacted", got)
	}
}

func TestFormatTools(t *testing.T) {
	tests := []struct {
		name  string
		tools []providers.Tool
		want  string // "" means nil
	}{
		{"none", nil, ""},
		{"full", []providers.Tool{{Name: "read_file", Description: "Read <a> & b", Parameters: json.RawMessage(
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"path":{"type":"string","description":"file"}},"required":["path"],"additionalProperties":false}`)}},
			`[{"functionDeclarations":[{"name":"read_file","description":"Read <a> & b","parameters":{"type":"OBJECT","properties":{"path":{"type":"STRING","description":"file"}},"required":["path"]}}]}]`},
		{"no parameters: none sent", []providers.Tool{{Name: "now"}},
			`[{"functionDeclarations":[{"name":"now"}]}]`},
		{"empty object schema: none sent", []providers.Tool{{Name: "now", Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}},
			`[{"functionDeclarations":[{"name":"now"}]}]`},
		{"properties without type get OBJECT", []providers.Tool{{Name: "f", Parameters: json.RawMessage(`{"properties":{"n":{"type":"integer"}}}`)}},
			`[{"functionDeclarations":[{"name":"f","parameters":{"properties":{"n":{"type":"INTEGER"}},"type":"OBJECT"}}]}]`},
		{"all tools in one declaration list", []providers.Tool{{Name: "a.b:c"}, {Name: "b", Description: "B"}},
			`[{"functionDeclarations":[{"name":"a.b:c"},{"name":"b","description":"B"}]}]`},
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
		{"schema not an object", []providers.Tool{{Name: "x", Parameters: json.RawMessage(`["a"]`)}}},
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
	if want := `{"role":"user","parts":[{"text":"why does <make> fail & \"stop\"?\n"}]}`; string(got) != want {
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
		{"model id kept, text output", []providers.ToolResult{{ID: "wxvlv0tv", Name: "add", Content: "5"}},
			`{"role":"user","parts":[{"functionResponse":{"id":"wxvlv0tv","name":"add","response":{"output":"5"}}}]}`},
		{"generated id not sent", []providers.ToolResult{{ID: "gemini_abc_0", Name: "weather", Content: "40 C"}},
			`{"role":"user","parts":[{"functionResponse":{"name":"weather","response":{"output":"40 C"}}}]}`},
		{"failure and success in one content", []providers.ToolResult{
			{ID: "a1", Name: "f", Content: "boom", IsError: true},
			{ID: "a2", Name: "g", Content: "<ok> & done"},
		}, `{"role":"user","parts":[{"functionResponse":{"id":"a1","name":"f","response":{"error":"boom"}}},{"functionResponse":{"id":"a2","name":"g","response":{"output":"<ok> & done"}}}]}`},
		{"JSON object output embedded", []providers.ToolResult{{ID: "x", Name: "f", Content: " {\"error\": null, \"n\": 1}\n"}},
			`{"role":"user","parts":[{"functionResponse":{"id":"x","name":"f","response":{"output":{"error": null, "n": 1}}}}]}`},
		{"JSON array output embedded", []providers.ToolResult{{ID: "x", Name: "f", Content: `[1,2]`, IsError: true}},
			`{"role":"user","parts":[{"functionResponse":{"id":"x","name":"f","response":{"error":[1,2]}}}]}`},
		{"JSON-looking text stays text", []providers.ToolResult{{ID: "x", Name: "f", Content: `{not json`}},
			`{"role":"user","parts":[{"functionResponse":{"id":"x","name":"f","response":{"output":"{not json"}}}]}`},
		{"a number stays text", []providers.ToolResult{{ID: "x", Name: "f", Content: `42`}},
			`{"role":"user","parts":[{"functionResponse":{"id":"x","name":"f","response":{"output":"42"}}}]}`},
		{"empty content, no id", []providers.ToolResult{{Name: "f"}},
			`{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":""}}}]}`},
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
	if _, err := New().FormatToolResults([]providers.ToolResult{{ID: "x", Content: "y"}}); err == nil || !strings.Contains(err.Error(), "name is missing") {
		t.Errorf("a result without name gave %v, want a name error", err)
	}
}

func TestBuildRequest(t *testing.T) {
	user := json.RawMessage(`{"role":"user","parts":[{"text":"hi"}]}`)
	model := json.RawMessage(`{"parts":[{"text":"hello"}],"role":"model"}`)
	call := json.RawMessage(`{"parts":[{"functionCall":{"name":"now","args":{}}}],"role":"model"}`)
	results := json.RawMessage(`{"role":"user","parts":[{"functionResponse":{"name":"now","response":{"content":"noon"}}}]}`)
	tools := []providers.Tool{{Name: "now", Parameters: json.RawMessage(`{"type":"object","properties":{"tz":{"type":["string","null"]}}}`)}}
	schema := json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"answer\": {\"type\": \"string\", \"minLength\": 1}},\n  \"required\": [\"answer\"],\n  \"additionalProperties\": false\n}")
	tests := []struct {
		name string
		req  providers.Request
		want string
	}{
		{"minimal: model and stream stay out of the body",
			providers.Request{Model: "gemini-2.5-flash", Messages: []json.RawMessage{user}, Stream: true},
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`},
		{"everything",
			providers.Request{Model: "m", System: "Be brief.", Messages: []json.RawMessage{user, model, user}, Tools: tools, MaxTokens: 100},
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"parts":[{"text":"hello"}],"role":"model"},{"role":"user","parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":"Be brief."}]},"tools":[{"functionDeclarations":[{"name":"now","parameters":{"type":"OBJECT","properties":{"tz":{"type":"STRING","nullable":true}}}}]}],"generationConfig":{"maxOutputTokens":100}}`},
		{"schema without tools: native JSON mode, cleaned",
			providers.Request{Model: "m", Messages: []json.RawMessage{user}, Schema: schema, MaxTokens: 50},
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":50,"responseMimeType":"application/json","responseSchema":{"type":"OBJECT","properties":{"answer":{"type":"STRING","minLength":1}},"required":["answer"]}}}`},
		{"schema with tools: in the system instruction",
			providers.Request{Model: "m", System: "Be brief.", Messages: []json.RawMessage{user}, Tools: []providers.Tool{{Name: "now"}}, Schema: schema},
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":"Be brief.\n\n` + jsonEscape(providers.SchemaInstruction) + `{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\",\"minLength\":1}},\"required\":[\"answer\"],\"additionalProperties\":false}"}]},"tools":[{"functionDeclarations":[{"name":"now"}]}]}`},
		{"no messages",
			providers.Request{Model: "m"},
			`{"contents":[]}`},
		// A run stopped with its results unanswered, then continued (-c):
		// Gemini refuses two user turns in a row.
		{"user turns in a row get a model turn between",
			providers.Request{Model: "m", Messages: []json.RawMessage{user, call, results, user}},
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]},` + string(call) + `,` + string(results) + `,` + string(unansweredTurn) + `,{"role":"user","parts":[{"text":"hi"}]}]}`},
		{"three in a row",
			providers.Request{Model: "m", Messages: []json.RawMessage{user, user, user}},
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]},` + string(unansweredTurn) + `,{"role":"user","parts":[{"text":"hi"}]},` + string(unansweredTurn) + `,{"role":"user","parts":[{"text":"hi"}]}]}`},
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
		{"schema not an object", providers.Request{Model: "m", Schema: json.RawMessage(`true`)}},
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
		{"truncated", `{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]`, providers.ErrMalformed},
		{"not an object", `"hi"`, providers.ErrMalformed},
		{"no candidates", `{"usageMetadata":{"promptTokenCount":3}}`, providers.ErrMalformed},
		{"parts not an array", `{"candidates":[{"content":{"parts":{"text":"hi"}}}]}`, providers.ErrMalformed},
		{"functionCall without name", `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"args":{}}}]},"finishReason":"STOP"}]}`, providers.ErrMalformed},
		{"array without finishReason", `[{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]}}]}]`, providers.ErrStreamCut},
		{"empty array", `[]`, providers.ErrStreamCut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn, err := New().ParseResponse([]byte(tt.body))
			if !errors.Is(err, tt.want) {
				t.Errorf("error = %v (turn %+v), want %v", err, turn, tt.want)
			}
		})
	}
}

func TestParseResponseAPIErrors(t *testing.T) {
	tests := []struct {
		name, body, typ string
		status          int
	}{
		{"error envelope", `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`, "RESOURCE_EXHAUSTED", 429},
		{"error inside a stream array", `[{"candidates":[{"content":{"parts":[{"text":"a"}]}}]},{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}]`, "INTERNAL", 0},
		{"prompt blocked", `{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":8}}`, "SAFETY", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New().ParseResponse([]byte(tt.body))
			var apiErr *providers.APIError
			if !errors.As(err, &apiErr) || apiErr.Type != tt.typ || apiErr.StatusCode != tt.status || apiErr.Message == "" {
				t.Errorf("error = %#v, want an APIError %s with status %d", err, tt.typ, tt.status)
			}
		})
	}
}

// TestParseResponseGeneratesMissingIDs: calls without id get stable,
// distinct generated ids; the echoed content stays the response's bytes,
// with no id written into it.
func TestParseResponseGeneratesMissingIDs(t *testing.T) {
	body := providertest.Read(t, "fantasy-25pro-multi-tool.json")
	turn, err := New().ParseResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Calls) != 2 {
		t.Fatalf("%d calls, want 2", len(turn.Calls))
	}
	for i, c := range turn.Calls {
		if !isGeneratedID(c.ID) {
			t.Errorf("call %d id = %q, want a generated id", i, c.ID)
		}
	}
	if turn.Calls[0].ID == turn.Calls[1].ID {
		t.Errorf("two calls share id %q", turn.Calls[0].ID)
	}
	if gjson.GetBytes(turn.Messages[0], "parts.#.functionCall.id").String() != "[]" {
		t.Errorf("an id was written into the echoed content: %s", turn.Messages[0])
	}
	again, err := New().ParseResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	if again.Calls[0].ID != turn.Calls[0].ID || again.Calls[1].ID != turn.Calls[1].ID {
		t.Errorf("generated ids are not stable: %v then %v", turn.Calls, again.Calls)
	}
	other, err := New().ParseResponse(providertest.Read(t, "pydantic-tool-config-any-no-args.json"))
	if err != nil {
		t.Fatal(err)
	}
	if other.Calls[0].ID == turn.Calls[0].ID {
		t.Errorf("two replies' first calls share id %q", other.Calls[0].ID)
	}
}

func TestParseResponseParts(t *testing.T) {
	body := `{"candidates":[{"content":{"parts":[` +
		`{"text":"planning","thought":true},{"text":"Hello "},{"text":"<world> & co","thoughtSignature":"c2ln"},` +
		`{"functionCall":{"name":"f"}},{"functionCall":{"name":"g","args":null,"id":"x1"}},{"inlineData":{"mimeType":"image/png","data":"AA=="}}` +
		`]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"cachedContentTokenCount":4,"toolUsePromptTokenCount":2,"candidatesTokenCount":5,"thoughtsTokenCount":7,"totalTokenCount":24}}`
	turn, err := New().ParseResponse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if turn.Text != "Hello <world> & co" || turn.Reasoning != "planning" {
		t.Errorf("text %q, reasoning %q", turn.Text, turn.Reasoning)
	}
	if len(turn.Calls) != 2 || turn.Calls[0].Arguments != "{}" || turn.Calls[1].Arguments != "{}" || turn.Calls[1].ID != "x1" || !isGeneratedID(turn.Calls[0].ID) {
		t.Errorf("calls = %+v", turn.Calls)
	}
	want := providers.Usage{InputTokens: 12, OutputTokens: 12, CacheReadTokens: 4, ReasoningTokens: 7, TotalTokens: 24}
	if turn.Usage != want {
		t.Errorf("Usage = %+v, want %+v", turn.Usage, want)
	}
	// A content without role is echoed with role model, parts untouched.
	if got := gjson.GetBytes(turn.Messages[0], "role").String(); got != "model" {
		t.Errorf("echoed role = %q", got)
	}
	if got, want := gjson.GetBytes(turn.Messages[0], "parts").Raw, gjson.Get(body, "candidates.0.content.parts").Raw; got != want {
		t.Errorf("echoed parts = %s\nwant %s", got, want)
	}
}

// TestParseResponseNoContent: a candidate without content (a safety stop)
// gives an empty turn with its reason and nothing to echo.
func TestParseResponseNoContent(t *testing.T) {
	turn, err := New().ParseResponse([]byte(`{"candidates":[{"finishReason":"SAFETY","index":0}],"usageMetadata":{"promptTokenCount":5,"totalTokenCount":5}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Messages) != 0 || turn.Text != "" || len(turn.Calls) != 0 || turn.StopReason != "SAFETY" {
		t.Errorf("turn = %+v", turn)
	}
	if turn.Usage.TotalTokens != 5 || turn.Usage.InputTokens != 5 {
		t.Errorf("Usage = %+v", turn.Usage)
	}
}
