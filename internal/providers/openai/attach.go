package openai

import (
	"encoding/json"

	"github.com/ask-cli/ask/internal/providers"
)

// withAttachments is a user message holding files: the text, then an
// image_url part with a data: URL for each image and a file part with
// file_data (a data: URL) for each PDF.
func withAttachments(text string, attachments []providers.Attachment) json.RawMessage {
	parts := make([]json.RawMessage, 0, len(attachments)+1)
	if text != "" {
		parts = append(parts, providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"text"`)},
			providers.Field{Key: "text", Value: providers.Quote(text)}))
	}
	for _, a := range attachments {
		if a.IsImage() {
			parts = append(parts, providers.Object(
				providers.Field{Key: "type", Value: json.RawMessage(`"image_url"`)},
				providers.Field{Key: "image_url", Value: providers.Object(providers.Field{Key: "url", Value: providers.Quote(a.DataURL())})}))
			continue
		}
		parts = append(parts, providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"file"`)},
			providers.Field{Key: "file", Value: providers.Object(
				providers.Field{Key: "filename", Value: providers.Quote(a.Name)},
				providers.Field{Key: "file_data", Value: providers.Quote(a.DataURL())})}))
	}
	return providers.Object(
		providers.Field{Key: "role", Value: json.RawMessage(`"user"`)},
		providers.ArrayField("content", parts))
}
