package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/ask-cli/ask/internal/providers"
)

// userBlock is one content block of a user message.
type userBlock struct {
	Type   string        `json:"type"`
	Source *base64Source `json:"source,omitempty"`
	Text   *string       `json:"text,omitempty"`
}

type base64Source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// withAttachments is a user message holding files: an image block for each
// image and a document block for each PDF, each with a base64 source,
// then the text (Anthropic advises the files before the question).
func withAttachments(text string, attachments []providers.Attachment) (json.RawMessage, error) {
	blocks := make([]userBlock, 0, len(attachments)+1)
	for _, a := range attachments {
		kind := "document"
		if a.IsImage() {
			kind = "image"
		}
		blocks = append(blocks, userBlock{Type: kind, Source: &base64Source{Type: "base64", MediaType: a.MIME, Data: a.Base64()}})
	}
	if text != "" {
		blocks = append(blocks, userBlock{Type: "text", Text: &text})
	}
	msg, err := providers.MarshalNoEscape(struct {
		Role    string      `json:"role"`
		Content []userBlock `json:"content"`
	}{"user", blocks})
	if err != nil {
		return nil, fmt.Errorf("anthropic: user message: %w", err)
	}
	return msg, nil
}
