package ollama

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

const chatRequestSchema = "ChatRequest" // components.schemas in ollama-openapi.yaml

// TestRequestsMatchSpec validates every request this package renders for the
// fixtures, first turns and rebuilt follow-ups, streamed and not, against
// Ollama's own OpenAPI description.
func TestRequestsMatchSpec(t *testing.T) {
	spec := providertest.SpecPath(t, "ollama-openapi.yaml")
	p := New()

	type body struct {
		name string
		req  providers.Request
	}
	var bodies []body
	for _, name := range []string{
		"fantasy-pr63-gptoss120b-tool.request.json",
		"fantasy-pr63-gptoss120b-multi-tool.request.json",
		"fantasy-pr63-gptoss120b-tool-stream.request.json",
		"fantasy-pr63-gptoss120b-multi-tool-stream.request.json",
		"fantasy-pr63-gptoss20b-tool-stream.request.json",
	} {
		bodies = append(bodies, body{name, recordedRequest(t, name)})
	}
	followUps := []struct{ prev, next string }{
		{"fantasy-pr63-gptoss120b-tool", "fantasy-pr63-gptoss120b-tool-turn2"},
		{"fantasy-pr63-gptoss120b-multi-tool", "fantasy-pr63-gptoss120b-multi-tool-2"},
	}
	for _, f := range followUps {
		req := recordedRequest(t, f.prev+".request.json")
		_, turn, results := rebuild(t, f.prev, providertest.Read(t, f.next+".request.json"))
		req.Messages = slices.Concat(req.Messages, turn.Messages, results)
		bodies = append(bodies, body{f.next + " (rebuilt)", req})

		// The same step with a failed call and a schema for the answer.
		failedResults, err := p.FormatToolResults([]providers.ToolResult{
			{ID: turn.Calls[0].ID, Name: turn.Calls[0].Name, Content: "no such city", IsError: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		failed := req
		failed.Messages = slices.Concat(req.Messages[:len(req.Messages)-len(results)], failedResults)
		failed.Schema = json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)
		bodies = append(bodies, body{f.next + " (failed result, schema)", failed})

		// The same step when the run knows the window (DESIGN §9): it
		// goes as options.num_ctx, so that Ollama never cuts silently.
		windowed := req
		windowed.ContextWindow, windowed.MaxTokens = 8192, 512
		bodies = append(bodies, body{f.next + " (num_ctx)", windowed})
	}

	for _, b := range bodies {
		for _, stream := range []bool{false, true} {
			req := b.req
			req.Stream = stream
			rendered, err := p.BuildRequest(req)
			if err != nil {
				t.Fatalf("%s: %v", b.name, err)
			}
			if err := providertest.ValidateSpec(t, spec, chatRequestSchema, rendered); err != nil {
				t.Errorf("%s, stream %v: %v\n%s", b.name, stream, err, providertest.Indent(rendered))
			}
			if got := gjson.GetBytes(rendered, "options.num_ctx"); int(got.Int()) != req.ContextWindow || got.Exists() != (req.ContextWindow > 0) {
				t.Errorf("%s: options.num_ctx = %s, want the window %d (none when 0)", b.name, got.Raw, req.ContextWindow)
			}
		}
	}
}

// TestSpecRejects proves the validation above can fail: each body breaks
// one rule of ChatRequest, and the echo rules this package follows
// (content always present, object arguments) are among them.
func TestSpecRejects(t *testing.T) {
	spec := providertest.SpecPath(t, "ollama-openapi.yaml")
	good := `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","function":{"name":"f","arguments":{"a":1}}}]},{"role":"tool","tool_name":"f","tool_call_id":"c1","content":"ok"}],"stream":false}`
	if err := providertest.ValidateSpec(t, spec, chatRequestSchema, []byte(good)); err != nil {
		t.Fatalf("valid request rejected: %v", err)
	}
	bad := []struct{ name, body string }{
		{"messages not an array", `{"model":"m","messages":{"role":"user","content":"hi"}}`},
		{"message without role", `{"model":"m","messages":[{"content":"hi"}]}`},
		{"unknown role", `{"model":"m","messages":[{"role":"wizard","content":"hi"}]}`},
		{"assistant message without content", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{}}}]}]}`},
		{"arguments as a JSON string", `{"model":"m","messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":"{\"a\":1}"}}]}]}`},
		{"no model", `{"messages":[{"role":"user","content":"hi"}]}`},
		{"stream not a boolean", `{"model":"m","messages":[],"stream":"yes"}`},
		{"tool without parameters", `{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"f"}}]}`},
	}
	for _, tt := range bad {
		if err := providertest.ValidateSpec(t, spec, chatRequestSchema, []byte(tt.body)); err == nil {
			t.Errorf("%s: accepted, want rejected", tt.name)
		}
	}
}

// spec is the schema of a request body in the official API description.
var spec = providertest.Spec{File: "ollama-openapi.yaml", Schema: "ChatRequest",
	Refused: `{"model":"m","messages":[{"role":"user","content":"hi","images":"AA=="}]}`}
