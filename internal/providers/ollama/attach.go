package ollama

import (
	"encoding/json"
	"fmt"

	"github.com/ask-cli/ask/internal/providers"
)

// withAttachments is a user message holding files: the text as content
// and the images, base64, in images. Ollama takes no other kind of file.
func withAttachments(text string, attachments []providers.Attachment) (json.RawMessage, error) {
	images := make([]json.RawMessage, 0, len(attachments))
	for _, a := range attachments {
		if !a.IsImage() {
			return nil, fmt.Errorf("ollama: %s is a %s: Ollama takes images only", a.Name, a.Kind())
		}
		images = append(images, providers.Quote(a.Base64()))
	}
	return providers.Object(
		providers.Field{Key: "role", Value: json.RawMessage(`"user"`)},
		providers.Field{Key: "content", Value: providers.Quote(text)},
		providers.ArrayField("images", images)), nil
}
