package providers

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

// The kinds of file -a/--attach takes, by media type.
const (
	MIMEPNG  = "image/png"
	MIMEJPEG = "image/jpeg"
	MIMEWebP = "image/webp"
	MIMEGIF  = "image/gif"
	MIMEPDF  = "application/pdf"
)

// Attachment is a file given with -a: an image or a PDF, sent in the
// first user message. Data encodes as base64 in JSON (the transcript's
// run.started), as the request bodies carry it.
type Attachment struct {
	Name string `json:"name"` // the file's base name
	MIME string `json:"mime_type"`
	Data []byte `json:"data"`
}

// IsImage reports whether the attachment is an image (not a PDF).
func (a Attachment) IsImage() bool { return strings.HasPrefix(a.MIME, "image/") }

// Base64 is the attachment's bytes in standard base64.
func (a Attachment) Base64() string { return base64.StdEncoding.EncodeToString(a.Data) }

// DataURL is the attachment as a data: URL.
func (a Attachment) DataURL() string { return "data:" + a.MIME + ";base64," + a.Base64() }

// Kind names the attachment for a person: "PNG image", "PDF".
func (a Attachment) Kind() string {
	switch a.MIME {
	case MIMEPDF:
		return "PDF"
	case MIMEPNG:
		return "PNG image"
	case MIMEJPEG:
		return "JPEG image"
	case MIMEWebP:
		return "WebP image"
	case MIMEGIF:
		return "GIF image"
	}
	return a.MIME
}

// SniffAttachment tells the media type of a file from its first bytes,
// never its name: one of the MIME constants, or "" with what the bytes
// look like instead.
func SniffAttachment(data []byte) (mime, looksLike string) {
	head := data[:min(len(data), 512)]
	switch {
	// WebP is RIFF, size, "WEBP"; net/http knows it only with a VP8 chunk
	// right after.
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return MIMEWebP, ""
	// A PDF reader looks for "%PDF-" in the first 1024 bytes, past any
	// junk a generator put first; net/http only at the very start.
	case bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-")):
		return MIMEPDF, ""
	}
	sniffed := http.DetectContentType(head)
	switch sniffed {
	case MIMEPNG, MIMEJPEG, MIMEGIF, MIMEWebP, MIMEPDF:
		return sniffed, ""
	}
	return "", sniffed
}

// MarshalNoEscape is json.Marshal without HTML escaping, so that text
// round-trips byte for byte.
func MarshalNoEscape(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
