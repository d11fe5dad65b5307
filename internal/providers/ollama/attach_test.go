package ollama

import (
	"encoding/json"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// The prompt's images go in images, base64; a PDF is refused.
func TestUserMessageAttachments(t *testing.T) {
	t.Parallel()
	all := providertest.Attachments(t)
	images := all[:4]
	msg, err := New().UserMessage("what is in these?", images...)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, "attach-user-message", msg)
	if _, err := New().UserMessage("and this?", all[4:]...); err == nil {
		t.Error("a PDF was put in images")
	}
	validateAttachSpec(t, msg)
}

// A first request carrying them matches the official spec.
func validateAttachSpec(t *testing.T, msg []byte) {
	t.Helper()
	spec := providertest.SpecPath(t, "ollama-openapi.yaml")
	if err := providertest.ValidateSpec(t, spec, "ChatRequest", []byte(`{"model":"m","messages":[{"role":"user","content":"hi","images":"AA=="}]}`)); err == nil {
		t.Fatal("a malformed attachment was accepted: the validator checks nothing")
	}
	body, err := New().BuildRequest(providers.Request{Model: "some-model", System: "be brief", Messages: []json.RawMessage{msg}})
	if err != nil {
		t.Fatal(err)
	}
	if err := providertest.ValidateSpec(t, spec, "ChatRequest", body); err != nil {
		t.Errorf("%v\n%s", err, body)
	}
}
