package anthropic

import (
	"encoding/json"

	"github.com/ask-cli/ask/internal/providers"
)

// withAttachments is a user message holding files: an image block for
// each image and a document block for each PDF, each with a base64
// source, then the text (Anthropic advises the files before the question).
func withAttachments(text string, attachments []providers.Attachment) json.RawMessage {
	blocks := make([]json.RawMessage, 0, len(attachments)+1)
	for _, a := range attachments {
		kind := json.RawMessage(`"document"`)
		if a.IsImage() {
			kind = json.RawMessage(`"image"`)
		}
		blocks = append(blocks, providers.Object(
			providers.Field{Key: "type", Value: kind},
			providers.Field{Key: "source", Value: providers.Object(
				providers.Field{Key: "type", Value: json.RawMessage(`"base64"`)},
				providers.Field{Key: "media_type", Value: providers.Quote(a.MIME)},
				providers.Field{Key: "data", Value: providers.Quote(a.Base64())})}))
	}
	if text != "" {
		blocks = append(blocks, providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"text"`)},
			providers.Field{Key: "text", Value: providers.Quote(text)}))
	}
	return providers.Object(
		providers.Field{Key: "role", Value: json.RawMessage(`"user"`)},
		providers.ArrayField("content", blocks))
}
