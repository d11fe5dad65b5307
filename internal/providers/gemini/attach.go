package gemini

import (
	"encoding/json"

	"github.com/ask-cli/ask/internal/providers"
)

// withAttachments is a user message holding files: an inlineData part
// (mimeType and base64 data) for each file, images and PDFs alike, then
// the text.
func withAttachments(text string, attachments []providers.Attachment) json.RawMessage {
	parts := make([]json.RawMessage, 0, len(attachments)+1)
	for _, a := range attachments {
		parts = append(parts, providers.Object(providers.Field{Key: "inlineData", Value: providers.Object(
			providers.Field{Key: "mimeType", Value: providers.Quote(a.MIME)},
			providers.Field{Key: "data", Value: providers.Quote(a.Base64())})}))
	}
	if text != "" {
		parts = append(parts, providers.Object(providers.Field{Key: "text", Value: providers.Quote(text)}))
	}
	return providers.Object(
		providers.Field{Key: "role", Value: json.RawMessage(`"user"`)},
		providers.ArrayField("parts", parts))
}
