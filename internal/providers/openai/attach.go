package openai

import (
	"encoding/json"
	"fmt"

	"github.com/ask-cli/ask/internal/providers"
)

// chatPart is one part of a Chat Completions user message's content.
type chatPart struct {
	Type     string       `json:"type"`
	Text     *string      `json:"text,omitempty"`
	ImageURL *chatImage   `json:"image_url,omitempty"`
	File     *chatFileRef `json:"file,omitempty"`
}

type chatImage struct {
	URL string `json:"url"`
}

type chatFileRef struct {
	Filename string `json:"filename"`
	FileData string `json:"file_data"`
}

// withAttachments is a user message holding files: the text, then an
// image_url part with a data: URL for each image and a file part with
// file_data (a data: URL) for each PDF.
func withAttachments(text string, attachments []providers.Attachment) (json.RawMessage, error) {
	parts := make([]chatPart, 0, len(attachments)+1)
	if text != "" {
		parts = append(parts, chatPart{Type: "text", Text: &text})
	}
	for _, a := range attachments {
		if a.IsImage() {
			parts = append(parts, chatPart{Type: "image_url", ImageURL: &chatImage{URL: a.DataURL()}})
		} else {
			parts = append(parts, chatPart{Type: "file", File: &chatFileRef{Filename: a.Name, FileData: a.DataURL()}})
		}
	}
	msg, err := providers.MarshalNoEscape(struct {
		Role    string     `json:"role"`
		Content []chatPart `json:"content"`
	}{"user", parts})
	if err != nil {
		return nil, fmt.Errorf("openai: user message: %w", err)
	}
	return msg, nil
}
