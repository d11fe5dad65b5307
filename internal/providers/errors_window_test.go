package providers_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// Each protocol's "context too long" answer, as its servers send it, is
// recognised with the window it names; look-alikes are not.
func TestContextTooLong(t *testing.T) {
	t.Parallel()
	for _, protocol := range fakeprovider.Protocols {
		status, body := fakeprovider.TooLong(protocol, 9120, 8000)
		e := providers.DecodeError(status, body)
		if !e.ContextTooLong() {
			t.Errorf("%s: %s not recognised", protocol, body)
		}
		want := 8000
		if protocol == "responses" {
			want = 0 // its message names no number
		}
		if got := e.ContextWindow(); got != want {
			t.Errorf("%s: window %d, want %d", protocol, got, want)
		}
	}
	others := []struct {
		status int
		body   string
	}{
		{400, `{"error":{"message":"Invalid 'messages[2].tool_call_id'","type":"invalid_request_error","code":"invalid_value"}}`},
		{429, `{"error":{"message":"Rate limit reached: the maximum context length is not the problem","type":"rate_limit"}}`},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 100000 > 64000, which is the maximum allowed"}}`},
		{404, `{"error":"model \"llama3\" not found, try pulling it first"}`},
	}
	for _, o := range others {
		if e := providers.DecodeError(o.status, []byte(o.body)); e.ContextTooLong() || e.ContextWindow() != 0 {
			t.Errorf("%d %s: read as context too long", o.status, o.body)
		}
	}
	// Wrapped, as the loop meets it.
	_, body := fakeprovider.TooLong("anthropic", 9000, 8000)
	if err := fmt.Errorf("step 3: %w", providers.DecodeError(http.StatusBadRequest, body)); !providers.IsContextTooLong(err) {
		t.Errorf("wrapped error not recognised")
	}
}

// ContextWindow reads numbers out of any provider's message: it never
// panics and never names a window for an error that is not about one.
func FuzzContextWindow(f *testing.F) {
	for _, protocol := range fakeprovider.Protocols {
		_, body := fakeprovider.TooLong(protocol, 9120, 8000)
		f.Add(400, string(body))
	}
	f.Add(400, `{"error":"request (1 tokens) exceeds the available context size (99999999999999999999 tokens)"}`)
	f.Fuzz(func(t *testing.T, status int, body string) {
		e := providers.DecodeError(status, []byte(body))
		if w := e.ContextWindow(); w < 0 || (w > 0 && !e.ContextTooLong()) {
			t.Errorf("window %d for %q", w, body)
		}
	})
}
