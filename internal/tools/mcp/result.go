package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxResult bounds what one call hands the model; a server may return
// megabytes.
const maxResult = 64 << 10

// renderResult turns a tool result into the text the model sees. Text
// blocks are kept as they are; other blocks become one-line summaries
// ("[image image/png, 1.2 kB]"), since the loop carries text only. The
// structured content is used only when there is no text: the reference
// servers send the same data in both, and sending it twice doubles tokens.
func renderResult(res *sdk.CallToolResult) (text string, isError bool) {
	var parts []string
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
			hasText = true
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %s]", orUnknown(c.MIMEType), byteSize(len(c.Data))))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %s]", orUnknown(c.MIMEType), byteSize(len(c.Data))))
		case *sdk.ResourceLink:
			parts = append(parts, describeLink(c))
		case *sdk.EmbeddedResource:
			s, isText := describeEmbedded(c.Resource)
			parts = append(parts, s)
			hasText = hasText || isText
		default:
			parts = append(parts, fmt.Sprintf("[%s content]", contentType(c)))
		}
	}
	if !hasText && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text = strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		if res.IsError {
			text = "the tool reported an error without a message"
		} else {
			text = "(the tool returned no content)"
		}
	}
	return limit(text, maxResult), res.IsError
}

func describeLink(l *sdk.ResourceLink) string {
	var b strings.Builder
	b.WriteString("[resource link")
	if l.Name != "" {
		fmt.Fprintf(&b, " %q", l.Name)
	}
	fmt.Fprintf(&b, ": %s", l.URI)
	if l.MIMEType != "" {
		fmt.Fprintf(&b, " (%s)", l.MIMEType)
	}
	if l.Description != "" {
		fmt.Fprintf(&b, " %s", l.Description)
	}
	b.WriteString("]")
	return b.String()
}

// describeEmbedded shows a text resource with its URI and summarizes a
// binary one.
func describeEmbedded(r *sdk.ResourceContents) (string, bool) {
	if r == nil {
		return "[empty resource]", false
	}
	if r.Blob == nil {
		return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text), true
	}
	return fmt.Sprintf("[resource %s, %s, %s]", r.URI, orUnknown(r.MIMEType), byteSize(len(r.Blob))), false
}

// contentType names a block the SDK knows but ask does not render.
func contentType(c sdk.Content) string {
	b, err := json.Marshal(c)
	if err == nil {
		var v struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b, &v) == nil && v.Type != "" {
			return v.Type
		}
	}
	return fmt.Sprintf("%T", c)
}

func orUnknown(mime string) string {
	if mime == "" {
		return "of unknown type"
	}
	return mime
}

func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
	}
}

// limit keeps the start of s within max bytes, on a rune boundary, saying
// how much was dropped.
func limit(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[... result cut: %d of %d bytes shown ...]", cut, len(s))
}
