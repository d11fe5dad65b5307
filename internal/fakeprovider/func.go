package fakeprovider

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/tidwall/gjson"
)

// StartFunc answers each request with the reply answer makes of its body:
// a model for many runs at once, whose requests come in no set order.
// answer may sleep (latency) or return a 429.
func StartFunc(answer func(body []byte) Reply) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if AboutModels(w, r) {
			return
		}
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, body)
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		reply := answer(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		Serve(reply).ServeHTTP(w, r)
	}))
	return s
}

// FirstUserText is the text of the first user message of a Chat
// Completions request: the run's prompt.
func FirstUserText(body []byte) string {
	for _, m := range gjson.GetBytes(body, "messages").Array() {
		if m.Get("role").String() != "user" {
			continue
		}
		c := m.Get("content")
		if c.IsArray() {
			var b bytes.Buffer
			for _, part := range c.Array() {
				b.WriteString(part.Get("text").String())
			}
			return b.String()
		}
		return c.String()
	}
	return ""
}
