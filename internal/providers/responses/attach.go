package responses

import (
	"encoding/json"
	"fmt"

	"github.com/ask-cli/ask/internal/providers"
)

// inputPart is one part of a Responses input message's content.
type inputPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data,omitempty"`
}

// withAttachments is a user message holding files: an input_text part, then
// an input_image (a data: URL, detail auto) for each image and an
// input_file (filename and file_data, a data: URL) for each PDF.
func withAttachments(text string, attachments []providers.Attachment) (json.RawMessage, error) {
	parts := make([]inputPart, 0, len(attachments)+1)
	if text != "" {
		parts = append(parts, inputPart{Type: "input_text", Text: text})
	}
	for _, a := range attachments {
		if a.IsImage() {
			parts = append(parts, inputPart{Type: "input_image", ImageURL: a.DataURL(), Detail: "auto"})
		} else {
			parts = append(parts, inputPart{Type: "input_file", Filename: a.Name, FileData: a.DataURL()})
		}
	}
	msg, err := providers.MarshalNoEscape(struct {
		Role    string      `json:"role"`
		Content []inputPart `json:"content"`
	}{"user", parts})
	if err != nil {
		return nil, fmt.Errorf("responses: user message: %w", err)
	}
	return msg, nil
}
