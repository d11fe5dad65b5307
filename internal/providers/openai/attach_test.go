package openai

import (
	"encoding/json"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// The prompt's attachments, one of each kind, in the protocol's own form.
func TestUserMessageAttachments(t *testing.T) {
	t.Parallel()
	msg, err := New().UserMessage("what is in these?", providertest.Attachments(t)...)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, "attach-user-message", msg)
	validateAttachSpec(t, msg)
}

// A first request carrying them matches the official spec.
func validateAttachSpec(t *testing.T, msg []byte) {
	t.Helper()
	spec := providertest.SpecPath(t, "openai-openapi.yaml")
	if err := providertest.ValidateSpec(t, spec, "CreateChatCompletionRequest", []byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":"data:image/png;base64,AA=="}]}]}`)); err == nil {
		t.Fatal("a malformed attachment was accepted: the validator checks nothing")
	}
	body, err := New().BuildRequest(providers.Request{Model: "some-model", System: "be brief", Messages: []json.RawMessage{msg}})
	if err != nil {
		t.Fatal(err)
	}
	if err := providertest.ValidateSpec(t, spec, "CreateChatCompletionRequest", body); err != nil {
		t.Errorf("%v\n%s", err, body)
	}
}
