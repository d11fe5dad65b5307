package gemini

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// idPrefix marks the ids ask makes for calls the model sent without one.
// FormatToolResults leaves such ids out of the functionResponse, since
// Gemini never saw them.
const idPrefix = "gemini_"

// generatedID makes a stable id for the index-th call of a reply; seed is
// the reply's bytes, so a replayed run gets the same ids.
func generatedID(seed []byte, index int) string {
	return idPrefix + strings.TrimPrefix(providers.GeneratedID(seed, index), "call_")
}

func isGeneratedID(id string) bool { return strings.HasPrefix(id, idPrefix) }

// ParseResponse reads a non-streamed generateContent response. The body may
// also be the JSON array of chunks that streamGenerateContent returns
// without alt=sse; it is read like a stream. The model's content is echoed
// as received, byte for byte.
func (*Protocol) ParseResponse(body []byte) (*providers.Turn, error) {
	if !gjson.ValidBytes(body) {
		return nil, providers.Malformed("gemini: response is not valid JSON")
	}
	doc := gjson.ParseBytes(body)
	if doc.IsArray() {
		return parseChunks(doc)
	}
	if !doc.IsObject() {
		return nil, providers.Malformed("gemini: response is not a JSON object")
	}
	if e := bodyError(doc, body); e != nil {
		return nil, e
	}
	cand := doc.Get("candidates.0")
	if !cand.Exists() {
		if e := blocked(doc); e != nil {
			return nil, e
		}
		return nil, providers.Malformed("gemini: response has no candidates")
	}
	content := cand.Get("content")
	partsv := content.Get("parts")
	if partsv.Exists() && !partsv.IsArray() {
		return nil, providers.Malformed("gemini: candidate content parts is not an array")
	}
	var parts []json.RawMessage
	partsv.ForEach(func(_, p gjson.Result) bool {
		parts = append(parts, json.RawMessage(p.Raw))
		return true
	})
	turn, err := readParts(parts, func() []byte { return body })
	if err != nil {
		return nil, err
	}
	if len(parts) > 0 {
		msg := json.RawMessage(content.Raw)
		if content.Get("role").String() != "model" {
			if msg, err = modelContent(json.RawMessage(partsv.Raw)); err != nil {
				return nil, err
			}
		}
		turn.Messages = []json.RawMessage{msg}
	}
	turn.Usage = readUsage(doc.Get("usageMetadata"))
	turn.StopReason = cand.Get("finishReason").String()
	return turn, nil
}

// parseChunks reads the stream-array form through the stream accumulator,
// which takes a list of chunks as one event.
func parseChunks(doc gjson.Result) (*providers.Turn, error) {
	s := newStream()
	if _, err := s.Add(providers.Event{Data: []byte(doc.Raw)}); err != nil {
		return nil, err
	}
	return s.Turn()
}

// bodyError returns the error a google.rpc.Status envelope reports, with
// its code as the HTTP status, or nil.
func bodyError(doc gjson.Result, body []byte) *providers.APIError {
	errv := doc.Get("error")
	if !errv.Exists() || errv.Type == gjson.Null {
		return nil
	}
	status := 0
	if c := errv.Get("code"); c.Type == gjson.Number && c.Int() >= 400 && c.Int() < 600 {
		status = int(c.Int())
	}
	return providers.DecodeError(status, body)
}

// blocked reports a prompt Gemini refused to answer at all: no candidates,
// and promptFeedback.blockReason saying why.
func blocked(doc gjson.Result) *providers.APIError {
	reason := doc.Get("promptFeedback.blockReason").String()
	if reason == "" {
		return nil
	}
	return &providers.APIError{Type: reason, Message: "the prompt was blocked (" + reason + "); rephrase it"}
}

// readParts reads text, reasoning (parts marked thought) and calls out of
// the model's parts, in order. A functionCall without an id gets one made
// from seed, which is called only then.
func readParts(parts []json.RawMessage, seed func() []byte) (*providers.Turn, error) {
	turn := &providers.Turn{}
	var text, reasoning strings.Builder
	var seedBytes []byte
	for i, raw := range parts {
		p := gjson.ParseBytes(raw)
		if fc := p.Get("functionCall"); fc.Exists() {
			name := fc.Get("name").String()
			if !fc.IsObject() || name == "" {
				return nil, providers.Malformed("gemini: functionCall in part %d has no name", i)
			}
			id := fc.Get("id").String()
			if id == "" {
				if seedBytes == nil {
					seedBytes = seed()
				}
				id = generatedID(seedBytes, len(turn.Calls))
			}
			args := "{}"
			if a := fc.Get("args"); a.Exists() && a.Type != gjson.Null {
				args = a.Raw
			}
			turn.Calls = append(turn.Calls, providers.ToolCall{ID: id, Name: name, Arguments: args})
			continue
		}
		if t := p.Get("text"); t.Type == gjson.String {
			if p.Get("thought").Bool() {
				reasoning.WriteString(t.Str)
			} else {
				text.WriteString(t.Str)
			}
		}
	}
	turn.Text = text.String()
	turn.Reasoning = reasoning.String()
	return turn, nil
}

// modelContent wraps parts as the model content to echo.
func modelContent(parts json.RawMessage) (json.RawMessage, error) {
	msg, err := providers.SetRaw([]byte(`{"role":"model"}`), "parts", parts)
	if err != nil {
		return nil, providers.Malformed("gemini: model content: %v", err)
	}
	return msg, nil
}

// readUsage maps usageMetadata. Gemini counts thoughts apart from the
// candidates; like the other protocols, output here includes them.
// promptTokenCount already includes the cached tokens
// (cachedContentTokenCount); Gemini reports no cache writes.
func readUsage(u gjson.Result) providers.Usage {
	n := func(path string) int { return int(u.Get(path).Int()) }
	in := n("promptTokenCount") + n("toolUsePromptTokenCount")
	thoughts := n("thoughtsTokenCount")
	out := n("candidatesTokenCount") + thoughts
	total := n("totalTokenCount")
	if total == 0 {
		total = in + out
	}
	return providers.Usage{
		InputTokens:     in,
		OutputTokens:    out,
		CacheReadTokens: n("cachedContentTokenCount"),
		ReasoningTokens: thoughts,
		TotalTokens:     total,
	}
}
