package providertest

import "testing"

// TestValidateSpecRejects proves the validator is not vacuous: the OpenAI
// file uses nullable without type in places, which some validators turn into
// "everything is valid".
func TestValidateSpecRejects(t *testing.T) {
	spec := SpecPath(t, "openai-openapi.yaml")
	good := `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`
	bad := []struct{ name, body string }{
		{"tool message without tool_call_id", `{"model":"gpt-4o","messages":[{"role":"tool","content":"ok"}]}`},
		{"messages not an array", `{"model":"gpt-4o","messages":{"role":"user"}}`},
		{"unknown role", `{"model":"gpt-4o","messages":[{"role":"wizard","content":"hi"}]}`},
	}
	if err := ValidateSpec(t, spec, "CreateChatCompletionRequest", []byte(good)); err != nil {
		t.Fatalf("valid request rejected: %v", err)
	}
	for _, tt := range bad {
		if err := ValidateSpec(t, spec, "CreateChatCompletionRequest", []byte(tt.body)); err == nil {
			t.Errorf("%s: accepted, want rejected", tt.name)
		}
	}
}
