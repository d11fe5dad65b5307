package ollama

import (
	"encoding/json"
	"fmt"

	"github.com/ask-cli/ask/internal/providers"
)

// withAttachments is a user message holding files: the text as content and
// the images, base64, in images. Ollama takes no other kind of file.
func withAttachments(text string, attachments []providers.Attachment) (json.RawMessage, error) {
	images := make([]string, 0, len(attachments))
	for _, a := range attachments {
		if !a.IsImage() {
			return nil, fmt.Errorf("ollama: %s is a %s: Ollama takes images only", a.Name, a.Kind())
		}
		images = append(images, a.Base64())
	}
	msg, err := providers.MarshalNoEscape(struct {
		Role    string   `json:"role"`
		Content string   `json:"content"`
		Images  []string `json:"images"`
	}{"user", text, images})
	if err != nil {
		return nil, fmt.Errorf("ollama: user message: %w", err)
	}
	return msg, nil
}
