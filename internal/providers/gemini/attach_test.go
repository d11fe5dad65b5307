package gemini

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

// No official spec is at hand for this protocol: the request must build,
// and the golden holds the form.
func validateAttachSpec(t *testing.T, msg []byte) {
	t.Helper()
	if _, err := New().BuildRequest(providers.Request{Model: "some-model", System: "be brief", Messages: []json.RawMessage{msg}}); err != nil {
		t.Fatal(err)
	}
}
