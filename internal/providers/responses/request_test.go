package responses

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// TestSpecValid validates against CreateResponse every request BuildRequest
// makes from the fixtures: each recorded first request rebuilt from its
// input and tools, and, for each recorded reply, the request that would
// follow it (its Turn.Messages, an output for each call, half of them
// failures, then a user message), streamed and not, with and without an
// answer schema. Rebuilt recorded follow-ups are validated in
// TestFollowUps.
func TestSpecValid(t *testing.T) {
	p := New()
	schema := json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)
	for _, name := range providertest.Fixtures(t, ".request.json") {
		t.Run(name, func(t *testing.T) {
			req := requestOf(recorded(t, name))
			req.System = "You are ask."
			body, err := p.BuildRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			if err := validateCreateResponse(t, body); err != nil {
				t.Errorf("first request: %v", err)
			}
			req.NoToolCalls = true // as on the last step a limit allows
			if body, err = p.BuildRequest(req); err != nil {
				t.Fatal(err)
			}
			if err := validateCreateResponse(t, body); err != nil {
				t.Errorf("first request as the last step: %v", err)
			}
		})
	}
	for _, name := range responseFixtures(t) {
		t.Run("after "+name, func(t *testing.T) {
			reqName := strings.TrimSuffix(strings.TrimSuffix(name, ".json"), ".sse") + ".request.json"
			rec := recorded(t, reqName)
			req := requestOf(rec)
			// A stateful recording's input starts mid-conversation (an
			// output for a call the server remembers), so the replay rules
			// cannot hold for it; the body must still be valid.
			stateful := rec.Get("previous_response_id").Exists()
			turn, err := providers.ParseBody(p, providertest.Read(t, name))
			if err != nil {
				t.Fatal(err)
			}
			var results []providers.ToolResult
			for i, c := range turn.Calls {
				results = append(results, providers.ToolResult{ID: c.ID, Name: c.Name, Content: "result <&> ü", IsError: i%2 == 1})
			}
			outputs, err := p.FormatToolResults(results)
			if err != nil {
				t.Fatal(err)
			}
			user, err := p.UserMessage("and now?")
			if err != nil {
				t.Fatal(err)
			}
			req.Messages = append(append(append(req.Messages, turn.Messages...), outputs...), user)
			for _, variant := range []struct {
				stream bool
				schema json.RawMessage
			}{{false, nil}, {true, schema}} {
				req.Stream, req.Schema = variant.stream, variant.schema
				body, err := p.BuildRequest(req)
				if err != nil {
					t.Fatal(err)
				}
				if !stateful {
					checkReplay(t, body)
				}
				if err := validateCreateResponse(t, body); err != nil {
					t.Errorf("follow-up (stream %v): %v", variant.stream, err)
				}
			}
		})
	}
}

// TestSpecRejects proves the validator is not vacuous for CreateResponse,
// and pins two gaps of the spec that this package closes itself.
func TestSpecRejects(t *testing.T) {
	good := `{"model":"m","store":false,"input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","encrypted_content":"x","summary":[]},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"},{"type":"message","role":"assistant","content":"done"}],"tools":[{"type":"function","name":"f","parameters":{"type":"object"},"strict":false}]}`
	if err := validateCreateResponse(t, []byte(good)); err != nil {
		t.Fatalf("valid request rejected: %v", err)
	}
	bad := []struct{ name, body string }{
		{"function tool without name", `{"model":"m","input":"hi","tools":[{"type":"function","parameters":{"type":"object"},"strict":false}]}`},
		{"tool parameters not an object", `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":"x","strict":false}]}`},
		{"function_call without call_id", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`},
		{"function_call_output without output", `{"model":"m","input":[{"type":"function_call_output","call_id":"c1"}]}`},
		{"function_call_output with empty call_id", `{"model":"m","input":[{"type":"function_call_output","call_id":"","output":"x"}]}`},
		{"reasoning item without id", `{"model":"m","input":[{"type":"reasoning","encrypted_content":"x","summary":[]}]}`},
		{"assistant output_text without id and status", `{"model":"m","input":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x","annotations":[]}]}]}`},
		{"json_schema format without name", `{"model":"m","input":"hi","text":{"format":{"type":"json_schema","schema":{"type":"object"}}}}`},
		{"max_output_tokens below 16", `{"model":"m","input":"hi","max_output_tokens":4}`},
		{"unknown include", `{"model":"m","input":"hi","include":["everything"]}`},
	}
	for _, tt := range bad {
		if err := validateCreateResponse(t, []byte(tt.body)); err == nil {
			t.Errorf("%s: accepted, want rejected", tt.name)
		}
	}

	// The spec lets a function_call_output go without call_id (it is
	// "string or null", not required), though the API cannot match such an
	// output to a call. FormatToolResults refuses to make one.
	if err := validateCreateResponse(t, []byte(`{"model":"m","input":[{"type":"function_call_output","output":"ok"}]}`)); err != nil {
		t.Errorf("the spec now rejects a function_call_output without call_id; this test's note is out of date: %v", err)
	}
	if _, err := New().FormatToolResults([]providers.ToolResult{{Name: "f", Content: "ok"}}); err == nil {
		t.Errorf("FormatToolResults accepted a result without a call id")
	}
	if _, err := New().FormatTools([]providers.Tool{{Description: "nameless"}}); err == nil {
		t.Errorf("FormatTools accepted a tool without a name")
	}
}

func TestBuildRequest(t *testing.T) {
	p := New()
	user, err := p.UserMessage("hi")
	if err != nil {
		t.Fatal(err)
	}
	weather := providers.Tool{Name: "weather", Description: "Get weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	tests := []struct {
		name string
		req  providers.Request
		want string
	}{
		{
			name: "minimal",
			req:  providers.Request{Model: "gpt-4o", Messages: []json.RawMessage{user}},
			want: `{"model":"gpt-4o","input":[{"role":"user","content":"hi"}],"store":false}`,
		},
		{
			name: "everything",
			req: providers.Request{Model: "gpt-5", System: "Be brief.", Messages: []json.RawMessage{user},
				Tools: []providers.Tool{weather, {Name: "now"}}, Stream: true, MaxTokens: 1000,
				Schema: json.RawMessage(`{"type":"object"}`)},
			want: `{"model":"gpt-5","instructions":"Be brief.","input":[{"role":"user","content":"hi"}],
				"tools":[{"type":"function","name":"weather","description":"Get weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":false},
				         {"type":"function","name":"now","parameters":{"type":"object","properties":{}},"strict":false}],
				"store":false,"include":["reasoning.encrypted_content"],"stream":true,"max_output_tokens":1000,
				"text":{"format":{"type":"json_schema","name":"answer","strict":false,"schema":{"type":"object"}}}}`,
		},
		{
			name: "max tokens below the API minimum",
			req:  providers.Request{Model: "gpt-4o", Messages: []json.RawMessage{user}, MaxTokens: 5},
			want: `{"model":"gpt-4o","input":[{"role":"user","content":"hi"}],"store":false,"max_output_tokens":16}`,
		},
		{
			name: "router prefix and text left alone",
			req:  providers.Request{Model: "openai/o4-mini", System: "a<b & \"c\"", Messages: []json.RawMessage{user}},
			want: `{"model":"openai/o4-mini","instructions":"a<b & \"c\"","input":[{"role":"user","content":"hi"}],"store":false,"include":["reasoning.encrypted_content"]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.BuildRequest(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			providertest.SameJSON(t, "request", got, []byte(tt.want))
			if err := validateCreateResponse(t, got); err != nil {
				t.Errorf("not a valid CreateResponse: %v", err)
			}
		})
	}
	if got, _ := p.BuildRequest(tests[3].req); !strings.Contains(string(got), `"a<b & \"c\""`) {
		t.Errorf("instructions were HTML-escaped: %s", got)
	}

	for _, bad := range []providers.Request{
		{Model: "m", Messages: []json.RawMessage{json.RawMessage(`[1]`)}},
		{Model: "m", Messages: []json.RawMessage{json.RawMessage(`{"role":`)}},
		{Model: "m", Tools: []providers.Tool{{Name: "f", Parameters: json.RawMessage(`"string"`)}}},
		{Model: "m", Schema: json.RawMessage(`[]`)},
	} {
		if body, err := p.BuildRequest(bad); err == nil {
			t.Errorf("BuildRequest(%+v) = %s, want an error", bad, body)
		}
	}
}

// TestWantsEncryptedReasoning pins which models get
// include: ["reasoning.encrypted_content"].
func TestWantsEncryptedReasoning(t *testing.T) {
	tests := []struct {
		model string
		want  bool
	}{
		{"gpt-5", true}, {"gpt-5.5", true}, {"gpt-5-mini", true}, {"gpt-5.1-codex", true}, {"gpt-6", true},
		{"o1", true}, {"o3", true}, {"o4-mini", true}, {"openai/gpt-5", true}, {"codex-mini-latest", true},
		{"gpt-5-chat-latest", false}, {"gpt-4o", false}, {"gpt-4.1-mini", false}, {"openai/gpt-4.1-mini", false},
		{"deepseek-v4-flash", false}, {"omni-moderation", false}, {"", false}, {"gpt-", false},
	}
	for _, tt := range tests {
		if got := wantsEncryptedReasoning(tt.model); got != tt.want {
			t.Errorf("wantsEncryptedReasoning(%q) = %v, want %v", tt.model, got, tt.want)
		}
	}
}

func TestFormatToolResults(t *testing.T) {
	tests := []struct {
		name   string
		result providers.ToolResult
		want   string
	}{
		{"success", providers.ToolResult{ID: "call_1", Name: "f", Content: "40 C"},
			`{"type":"function_call_output","call_id":"call_1","output":"40 C"}`},
		{"failure gets marked", providers.ToolResult{ID: "call_2", Content: "no such file", IsError: true},
			`{"type":"function_call_output","call_id":"call_2","output":"Error: no such file"}`},
		{"failure already marked", providers.ToolResult{ID: "call_3", Content: "error: denied by policy", IsError: true},
			`{"type":"function_call_output","call_id":"call_3","output":"error: denied by policy"}`},
		{"empty output", providers.ToolResult{ID: "call_4"},
			`{"type":"function_call_output","call_id":"call_4","output":""}`},
		{"text kept as is", providers.ToolResult{ID: "call_5", Content: "<b>&amp;</b>\n\"q\""},
			`{"type":"function_call_output","call_id":"call_5","output":"<b>&amp;</b>\n\"q\""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New().FormatToolResults([]providers.ToolResult{tt.result})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("got %d items, want 1", len(got))
			}
			providertest.SameJSON(t, "output item", got[0], []byte(tt.want))
			if strings.Contains(string(got[0]), `\u003c`) {
				t.Errorf("output was HTML-escaped: %s", got[0])
			}
		})
	}
}

func TestSmallParts(t *testing.T) {
	p := New()
	if p.Name() != "responses" || p.Framing() != providers.SSE {
		t.Errorf("Name %q, Framing %v", p.Name(), p.Framing())
	}
	for base, want := range map[string]string{
		"https://api.openai.com/v1":      "https://api.openai.com/v1/responses",
		"https://openrouter.ai/api/v1/":  "https://openrouter.ai/api/v1/responses",
		"https://api.deepseek.com":       "https://api.deepseek.com/responses",
		"http://localhost:1234/v1//":     "http://localhost:1234/v1/responses",
		"https://example.test/openai/v1": "https://example.test/openai/v1/responses",
	} {
		if got := p.Endpoint(base, "gpt-5", true); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", base, got, want)
		}
	}
	h := http.Header{}
	p.Authorize(h, "")
	if len(h) != 0 {
		t.Errorf("empty key set headers %v", h)
	}
	p.Authorize(h, "fake-test")
	if got := h.Get("Authorization"); got != "Bearer fake-test" {
		t.Errorf("Authorization = %q", got)
	}
	msg, err := p.UserMessage("What's <up>?")
	if err != nil {
		t.Fatal(err)
	}
	if string(msg) != `{"role":"user","content":"What's <up>?"}` {
		t.Errorf("UserMessage = %s", msg)
	}
	if tools, err := p.FormatTools(nil); tools != nil || err != nil {
		t.Errorf("FormatTools(nil) = %s, %v", tools, err)
	}
	body, err := p.BuildRequest(providers.Request{Model: "m", Messages: []json.RawMessage{msg}})
	if err != nil {
		t.Fatal(err)
	}
	if gjson.GetBytes(body, "tools").Exists() {
		t.Errorf("no tools, but a tools field: %s", body)
	}
}
