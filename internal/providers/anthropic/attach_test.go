package anthropic

import (
	"testing"

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
	providertest.AttachedRequest(t, New(), providertest.Spec{}, msg) // no official spec
}
