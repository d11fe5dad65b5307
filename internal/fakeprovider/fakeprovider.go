// Package fakeprovider is a scripted model behind a real HTTP server on
// 127.0.0.1, speaking the Chat Completions protocol. Tests, the demo
// generator and the benchmarks drive ask's real loop against it; it can also
// serve recorded fixture bodies as they are.
package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// Reply is one scripted answer of the model.
type Reply struct {
	Text  string
	Calls []providers.ToolCall
	// Body, when set, is served verbatim instead of a rendered reply (a
	// recorded fixture, a broken stream, an HTML error page).
	Body        string
	ContentType string // for Body; default chosen from its first byte
	Status      int    // default 200
	Header      http.Header
	// Usage, when set, is the usage object the reply reports instead of
	// the fixed one (cache counts, a cost).
	Usage json.RawMessage
}

// Server serves the scripted replies in order, one a request.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	replies  []Reply
	next     int
	requests [][]byte
	headers  []http.Header
}

// Start serves replies on 127.0.0.1 until Close.
func Start(replies ...Reply) *Server {
	s := &Server{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Requests returns the bodies received so far.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.requests...)
}

// Headers returns the request headers received so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if AboutModels(w, r) {
		return
	}
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, body)
	s.headers = append(s.headers, r.Header.Clone())
	var reply *Reply
	if s.next < len(s.replies) {
		reply = &s.replies[s.next]
		s.next++
	}
	s.mu.Unlock()

	if reply == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"message":"fake provider: no scripted reply left","type":"server_error"}}`)
		return
	}
	for k, vs := range reply.Header {
		w.Header()[k] = vs
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	if reply.Body != "" {
		ct := reply.ContentType
		if ct == "" {
			ct = "application/json"
			if t := strings.TrimSpace(reply.Body); !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
				ct = "text/event-stream"
			}
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		io.WriteString(w, reply.Body)
		return
	}
	if gjson.GetBytes(body, "stream").Bool() {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		w.Write(ChatStream(*reply))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(ChatJSON(*reply))
}

// AboutModels answers a question about the provider's models (a model
// listing, Ollama's /api/show) with 404, as a server that knows none does:
// it is no step of a run, and takes none of the scripted replies. It
// reports whether r was one.
func AboutModels(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && !strings.HasSuffix(r.URL.Path, "/api/show") {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprint(w, `{"error":{"message":"fake provider: no models to tell of","type":"not_found"}}`)
	return true
}

// usage is what every rendered reply reports, so that tests can check sums.
const usageJSON = `{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}`

// usage is the reply's usage object.
func (r Reply) usage() json.RawMessage {
	if len(r.Usage) > 0 {
		return r.Usage
	}
	return json.RawMessage(usageJSON)
}

// ChatJSON renders a reply as a non-streamed Chat Completions body.
func ChatJSON(r Reply) []byte {
	msg := map[string]any{"role": "assistant", "content": nil}
	if r.Text != "" {
		msg["content"] = r.Text
	}
	finish := "stop"
	if len(r.Calls) > 0 {
		finish = "tool_calls"
		var calls []map[string]any
		for _, c := range r.Calls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
		}
		msg["tool_calls"] = calls
	}
	out := map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   r.usage(),
	}
	b, _ := json.Marshal(out)
	return b
}

// ChatStream renders a reply as a Chat Completions SSE stream the way real
// servers send it: text in several deltas, each call's id and name first and
// its arguments in two fragments, usage in a last chunk, then [DONE].
func ChatStream(r Reply) []byte {
	var b bytes.Buffer
	chunk := func(delta any, finish any) {
		c := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		j, _ := json.Marshal(c)
		fmt.Fprintf(&b, "data: %s\n\n", j)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, part := range split(r.Text, 3) {
		chunk(map[string]any{"content": part}, nil)
	}
	for i, c := range r.Calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		for _, part := range split(c.Arguments, 2) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": part}}}}, nil)
		}
	}
	finish := "stop"
	if len(r.Calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":%s}\n\n", r.usage())
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// split cuts s into at most n pieces of similar length, on rune boundaries.
func split(s string, n int) []string {
	rs := []rune(s)
	if len(rs) == 0 {
		return nil
	}
	size := (len(rs) + n - 1) / n
	var parts []string
	for len(rs) > 0 {
		k := min(size, len(rs))
		parts = append(parts, string(rs[:k]))
		rs = rs[k:]
	}
	return parts
}

// Call is a shorthand for a scripted tool call.
func Call(id, name, arguments string) providers.ToolCall {
	return providers.ToolCall{ID: id, Name: name, Arguments: arguments}
}
