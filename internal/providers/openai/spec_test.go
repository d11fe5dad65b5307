package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// TestRequestsMatchSpec validates every request BuildRequest makes for the
// fixtures against CreateChatCompletionRequest in OpenAI's own OpenAPI
// file: each recorded first turn (streamed and not, and with a response
// schema), each rebuilt follow-up, and a next request after every recorded
// reply (so echoes of streams and of whole bodies are both covered).
func TestRequestsMatchSpec(t *testing.T) {
	spec := providertest.SpecPath(t, "openai-openapi.yaml")
	const schema = "CreateChatCompletionRequest"

	// The validator must not be vacuous.
	bad := `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"},{"role":"tool","content":"5"}]}`
	if err := providertest.ValidateSpec(t, spec, schema, []byte(bad)); err == nil {
		t.Fatal("a tool message without tool_call_id was accepted: the validator checks nothing")
	}

	p := New()
	bodies := map[string][]byte{}
	build := func(name string, r providers.Request) {
		t.Helper()
		body, err := p.BuildRequest(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		bodies[name] = body
	}

	for _, name := range requestFixtures(t) {
		r := requestFrom(t, providertest.Read(t, name))
		r.Stream = false
		build(name+" (no stream)", r)
		r.Stream = true
		build(name+" (stream)", r)
		r.MaxTokens = 1000
		r.Schema = json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)
		build(name+" (schema)", r)
	}
	for _, c := range followUpCases {
		body, _ := rebuild(t, c)
		bodies[c.request+" (rebuilt)"] = body
	}
	for _, name := range responseFixtures(t) {
		turn, err := parseFixture(t, name)
		if err != nil {
			continue // error bodies
		}
		base := strings.TrimSuffix(strings.TrimSuffix(name, ".json"), ".sse")
		r := requestFrom(t, providertest.Read(t, base+".request.json"))
		r.Messages = append(r.Messages, turn.Messages...)
		var results []providers.ToolResult
		for i, c := range turn.Calls {
			results = append(results, providers.ToolResult{ID: c.ID, Name: c.Name, Content: "result", IsError: i == 1})
		}
		formatted, err := p.FormatToolResults(results)
		if err != nil {
			t.Fatal(err)
		}
		r.Messages = append(r.Messages, formatted...)
		user, _ := p.UserMessage("and then?")
		r.Messages = append(r.Messages, user)
		r.Stream = strings.HasSuffix(name, ".sse")
		build(name+" (next request)", r)
		r.NoToolCalls = true
		build(name+" (last step)", r)
	}

	for name, body := range bodies {
		if err := providertest.ValidateSpec(t, spec, schema, body); err != nil {
			t.Errorf("%s: request does not match the spec: %v\n%s", name, err, providertest.Indent(body))
		}
	}
	t.Logf("%d requests validated", len(bodies))
}

// spec is the schema of a request body in the official API description.
var spec = providertest.Spec{File: "openai-openapi.yaml", Schema: "CreateChatCompletionRequest",
	Refused: `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":"data:image/png;base64,AA=="}]}]}`}
