package openai

import "strings"

// maxTokensField names the request field that caps the reply for model.
// OpenAI's reasoning models (the o-series and gpt-5 onwards) reject the
// deprecated "max_tokens" and want "max_completion_tokens"; every other
// server speaking this protocol (DeepSeek, Moonshot, LM Studio, llama.cpp,
// Ollama's /v1) knows "max_tokens", which OpenAI's older models accept too.
//
// The choice is by name because the protocol does not know which provider
// it talks to. A router's vendor prefix ("openai/gpt-5") is ignored:
// OpenRouter accepts max_completion_tokens for those models (the recorded
// fantasy-openai-tool-stream request sends it).
func maxTokensField(model string) string {
	if reasoningModel(model) {
		return "max_completion_tokens"
	}
	return "max_tokens"
}

// reasoningModel reports whether model is one of OpenAI's reasoning
// families: o1, o3, o4-mini and the like, and gpt-5 or a later major
// version (gpt-5-mini, gpt-5.1, gpt-6).
func reasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if len(m) >= 2 && m[0] == 'o' && isDigit(m[1]) {
		return true
	}
	rest, ok := strings.CutPrefix(m, "gpt-")
	if !ok {
		return false
	}
	major, digits := 0, 0
	for ; digits < len(rest) && digits < 4 && isDigit(rest[digits]); digits++ {
		major = major*10 + int(rest[digits]-'0')
	}
	return digits > 0 && major >= 5
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
