package providers

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"
)

// SniffReply names the wire protocol a response body or recorded stream is
// in, by the shape of its first JSON object: "openai" (Chat Completions),
// "responses", "anthropic", "gemini" or "ollama"; "" when it cannot tell
// (an error body, text, an empty input). The stages use it to say which -p
// a reply of another provider needs, rather than read it wrong.
func SniffReply(data []byte) string {
	o := firstObject(data)
	if !o.IsObject() {
		return ""
	}
	typ := o.Get("type").String()
	switch {
	case typ == "message" && o.Get("content").IsArray(), strings.HasPrefix(typ, "message_"), strings.HasPrefix(typ, "content_block_"):
		return "anthropic"
	case o.Get("object").String() == "response", strings.HasPrefix(typ, "response."):
		return "responses"
	case o.Get("candidates").Exists():
		return "gemini"
	case o.Get("choices").Exists(), strings.HasPrefix(o.Get("object").String(), "chat.completion"):
		return "openai"
	case o.Get("message").IsObject() && o.Get("done").Exists():
		return "ollama"
	}
	return ""
}

// firstObject is the first JSON object of a body, an SSE stream (its first
// data line that holds one), NDJSON, or a JSON array of chunks.
func firstObject(data []byte) gjson.Result {
	data = bytes.TrimSpace(data)
	if bytes.HasPrefix(data, []byte("[")) {
		return gjson.GetBytes(data, "0")
	}
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("data:")))
		if bytes.HasPrefix(line, []byte("{")) && gjson.ValidBytes(line) {
			return gjson.ParseBytes(line)
		}
		if bytes.HasPrefix(line, []byte("{")) {
			return gjson.ParseBytes(data) // one body over several lines
		}
	}
	return gjson.Result{}
}
