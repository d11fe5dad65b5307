package gemini

import (
	"encoding/json"
	"fmt"

	"github.com/ask-cli/ask/internal/providers"
)

// userPart is one part of a user content.
type userPart struct {
	InlineData *inlineData `json:"inlineData,omitempty"`
	Text       *string     `json:"text,omitempty"`
}

type inlineData struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// withAttachments is a user message holding files: an inlineData part
// (mimeType and base64 data) for each file, images and PDFs alike, then
// the text.
func withAttachments(text string, attachments []providers.Attachment) (json.RawMessage, error) {
	parts := make([]userPart, 0, len(attachments)+1)
	for _, a := range attachments {
		parts = append(parts, userPart{InlineData: &inlineData{MimeType: a.MIME, Data: a.Base64()}})
	}
	if text != "" {
		parts = append(parts, userPart{Text: &text})
	}
	msg, err := providers.MarshalNoEscape(struct {
		Role  string     `json:"role"`
		Parts []userPart `json:"parts"`
	}{"user", parts})
	if err != nil {
		return nil, fmt.Errorf("gemini: user message: %w", err)
	}
	return msg, nil
}
