package ollama

import (
	"testing"

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
	providertest.AttachedRequest(t, New(), spec, msg)
}
