package responses

import (
	"encoding/json"

	"github.com/ask-cli/ask/internal/providers"
)

// withAttachments is a user message holding files: an input_text part,
// then an input_image (a data: URL, detail auto) for each image and an
// input_file (filename and file_data, a data: URL) for each PDF.
func withAttachments(text string, attachments []providers.Attachment) json.RawMessage {
	parts := make([]json.RawMessage, 0, len(attachments)+1)
	if text != "" {
		parts = append(parts, providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"input_text"`)},
			providers.Field{Key: "text", Value: providers.Quote(text)}))
	}
	for _, a := range attachments {
		if a.IsImage() {
			parts = append(parts, providers.Object(
				providers.Field{Key: "type", Value: json.RawMessage(`"input_image"`)},
				providers.Field{Key: "image_url", Value: providers.Quote(a.DataURL())},
				providers.Field{Key: "detail", Value: json.RawMessage(`"auto"`)}))
			continue
		}
		parts = append(parts, providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"input_file"`)},
			providers.Field{Key: "filename", Value: providers.Quote(a.Name)},
			providers.Field{Key: "file_data", Value: providers.Quote(a.DataURL())}))
	}
	return providers.Object(
		providers.Field{Key: "role", Value: json.RawMessage(`"user"`)},
		providers.ArrayField("content", parts))
}
