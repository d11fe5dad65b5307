package fakeprovider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Protocols are the wire protocols a Windowed model speaks.
var Protocols = []string{"openai", "responses", "anthropic", "gemini", "ollama"}

// Windowed is a model with a context window, in one protocol: a request
// over Window tokens (a token counted as TokenBytes bytes of the body) is
// answered with that protocol's own "context too long" error, as its
// servers send it; any other is answered with what Answer makes of it,
// rendered in the protocol's form. Its usage reports the request's tokens,
// and as cache reads the longest prefix it shares with an earlier request,
// as a provider's prompt cache would serve it.
type Windowed struct {
	Protocol string
	Window   int
	Answer   func(body []byte) Reply

	mu       sync.Mutex
	seen     [][]byte
	billed   Bill
	overflow int
}

// TokenBytes is the bytes a Windowed model counts as one token.
const TokenBytes = 4

// Bill is what a Windowed model was asked for and billed.
type Bill struct {
	Requests, Refused         int
	InputTokens, CachedTokens int
	// Each is every answered request's input and cached tokens, in order.
	Each []Counted
}

// Counted is one answered request's input tokens and the part of them
// read from the cache.
type Counted struct{ Input, Cached int }

// Tokens is how many tokens a Windowed model counts in a body.
func Tokens(body []byte) int { return (len(body) + TokenBytes - 1) / TokenBytes }

// StartWindowed serves w on 127.0.0.1 until Close.
func StartWindowed(w *Windowed) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if AboutModels(rw, r) {
			return
		}
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, body)
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		status, out := w.serve(body)
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(status)
		rw.Write(out)
	}))
	return s
}

// Bill returns what the model was asked for so far.
func (w *Windowed) Bill() Bill {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.billed
	b.Each = append([]Counted(nil), b.Each...)
	return b
}

func (w *Windowed) serve(body []byte) (int, []byte) {
	tokens := Tokens(body)
	w.mu.Lock()
	w.billed.Requests++
	if tokens > w.Window {
		w.billed.Refused++
		w.mu.Unlock()
		return TooLong(w.Protocol, tokens, w.Window)
	}
	shared := 0
	for _, prev := range w.seen {
		shared = max(shared, commonPrefix(prev, body))
	}
	w.seen = append(w.seen, body)
	cached := shared / TokenBytes
	w.billed.InputTokens += tokens
	w.billed.CachedTokens += cached
	w.billed.Each = append(w.billed.Each, Counted{tokens, cached})
	w.mu.Unlock()
	return http.StatusOK, Render(w.Protocol, w.Answer(body), tokens, cached)
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// TooLong is a protocol's answer to a request of tokens over window, in
// the form its servers send (status and body).
func TooLong(protocol string, tokens, window int) (int, []byte) {
	var body string
	switch protocol {
	case "openai":
		body = fmt.Sprintf(`{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, window, tokens)
	case "responses":
		body = `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`
	case "anthropic":
		body = fmt.Sprintf(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"}}`, tokens, window)
	case "gemini":
		body = fmt.Sprintf(`{"error":{"code":400,"message":"The input token count (%d) exceeds the maximum number of tokens allowed (%d).","status":"INVALID_ARGUMENT"}}`, tokens, window)
	case "ollama":
		inner := fmt.Sprintf(`{"error":{"code":400,"message":"request (%d tokens) exceeds the available context size (%d tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":%d,"n_ctx":%d}}`, tokens, window, tokens, window)
		b, _ := json.Marshal(map[string]string{"error": inner})
		body = string(b)
	default:
		panic("fakeprovider: no protocol " + protocol)
	}
	return http.StatusBadRequest, []byte(body)
}

// Render is a reply as a protocol's non-streamed response body, reporting
// tokens of input of which cached were read from the cache.
func Render(protocol string, r Reply, tokens, cached int) []byte {
	args := func(c string) any {
		var v any
		if json.Unmarshal([]byte(c), &v) != nil || v == nil {
			return map[string]any{}
		}
		return v
	}
	var out any
	switch protocol {
	case "openai":
		r.Usage = json.RawMessage(fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":20,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}`, tokens, tokens+20, cached))
		return ChatJSON(r)
	case "responses":
		var items []any
		if r.Text != "" {
			items = append(items, map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}}})
		}
		for i, c := range r.Calls {
			items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprint("fc_", i), "call_id": c.ID, "name": c.Name, "arguments": c.Arguments, "status": "completed"})
		}
		out = map[string]any{"id": "resp_fake", "object": "response", "status": "completed", "model": "fake-model", "output": items,
			"usage": map[string]any{"input_tokens": tokens, "input_tokens_details": map[string]any{"cached_tokens": cached}, "output_tokens": 20, "total_tokens": tokens + 20}}
	case "anthropic":
		var blocks []any
		if r.Text != "" {
			blocks = append(blocks, map[string]any{"type": "text", "text": r.Text})
		}
		stop := "end_turn"
		for _, c := range r.Calls {
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": args(c.Arguments)})
			stop = "tool_use"
		}
		out = map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake-model", "content": blocks, "stop_reason": stop,
			"usage": map[string]any{"input_tokens": tokens - cached, "cache_read_input_tokens": cached, "output_tokens": 20}}
	case "gemini":
		var parts []any
		if r.Text != "" {
			parts = append(parts, map[string]any{"text": r.Text})
		}
		for _, c := range r.Calls {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"id": c.ID, "name": c.Name, "args": args(c.Arguments)}})
		}
		out = map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
			"usageMetadata": map[string]any{"promptTokenCount": tokens, "cachedContentTokenCount": cached, "candidatesTokenCount": 20, "totalTokenCount": tokens + 20},
			"modelVersion":  "fake-model"}
	case "ollama":
		msg := map[string]any{"role": "assistant", "content": r.Text}
		var calls []any
		for _, c := range r.Calls {
			calls = append(calls, map[string]any{"id": c.ID, "function": map[string]any{"name": c.Name, "arguments": args(c.Arguments)}})
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		out = map[string]any{"model": "fake-model", "created_at": "2026-01-01T00:00:00Z", "message": msg, "done": true, "done_reason": "stop",
			"prompt_eval_count": tokens, "eval_count": 20}
	default:
		panic("fakeprovider: no protocol " + protocol)
	}
	b, _ := json.Marshal(out)
	return b
}

// IsSummaryRequest reports whether a body asks for a summary in the words
// given (loop.SummaryPrompt, which this package does not import): they
// are in no other request.
func IsSummaryRequest(body []byte, prompt string) bool {
	quoted, _ := json.Marshal(prompt)
	return strings.Contains(string(body), strings.Trim(string(quoted), `"`))
}
