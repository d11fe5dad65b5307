package ollama

import (
	"encoding/json"
	"net/http"
	"testing"
)

// /api/show's answer gives the window Ollama runs a model at: the
// Modelfile's num_ctx, else its default within what the model takes.
func TestParseWindow(t *testing.T) {
	t.Parallel()
	p := New()
	method, url, body := p.WindowRequest("http://localhost:11434", "qwen3")
	if method != http.MethodPost || url != "http://localhost:11434/api/show" || string(body) != `{"model":"qwen3"}` {
		t.Errorf("request %s %s %s", method, url, body)
	}
	if _, url, _ := p.WindowRequest("http://host:11434/api/", "m"); url != "http://host:11434/api/show" {
		t.Errorf("under /api: %s", url)
	}
	tests := []struct {
		name, body string
		want       int
	}{
		// The API description's own example.
		{"num_ctx in the Modelfile", `{"parameters":"temperature 0.7\nnum_ctx 2048","model_info":{"gemma4.context_length":131072}}`, 2048},
		{"the server's default within the model's most", `{"parameters":"temperature 0.7","model_info":{"general.architecture":"qwen3","qwen3.context_length":40960}}`, DefaultNumCtx},
		{"a model smaller than the default", `{"model_info":{"tiny.context_length":2048}}`, 2048},
		{"nothing said", `{}`, DefaultNumCtx},
		{"a num_ctx that is no number", `{"parameters":"num_ctx lots","model_info":{"x.context_length":1000}}`, 1000},
	}
	for _, tt := range tests {
		if got, err := p.ParseWindow([]byte(tt.body), "m"); err != nil || got != tt.want {
			t.Errorf("%s: %d (%v), want %d", tt.name, got, err, tt.want)
		}
	}
	if _, err := p.ParseWindow([]byte("not json"), "m"); err == nil {
		t.Error("an answer that is not JSON read without error")
	}
}

// ParseWindow never panics and never gives a window below 1 for an answer
// it reads.
func FuzzParseWindow(f *testing.F) {
	f.Add(`{"parameters":"temperature 0.7\nnum_ctx 2048","model_info":{"gemma4.context_length":131072}}`)
	f.Add(`{"parameters":"num_ctx -5\nnum_ctx 99999999999999999999"}`)
	f.Fuzz(func(t *testing.T, body string) {
		n, err := New().ParseWindow([]byte(body), "m")
		if err == nil && n < 1 {
			t.Errorf("window %d for %q", n, body)
		}
		if err != nil && json.Valid([]byte(body)) {
			t.Errorf("valid JSON refused: %v", err)
		}
	})
}
