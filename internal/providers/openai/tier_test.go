package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// TestFlexMatchesSpec: --tier flex is service_tier "flex", a value of
// the service_tier enum of CreateChatCompletionRequest (which the
// validator checks: a value outside it is refused); Chat Completions has
// no background mode.
func TestFlexMatchesSpec(t *testing.T) {
	t.Parallel()
	specFile := providertest.SpecPath(t, "openai-openapi.yaml")
	const schema = "CreateChatCompletionRequest"
	if providertest.ValidateSpec(t, specFile, schema, []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"service_tier":"cheapest"}`)) == nil {
		t.Fatal("a service_tier outside the enum was accepted: the validator checks nothing")
	}
	user, _ := New().UserMessage("hi")
	for _, stream := range []bool{false, true} {
		body, err := New().BuildRequest(providers.Request{Model: "o4-mini", Messages: []json.RawMessage{user}, Tier: providers.TierFlex, Stream: stream,
			Tools: []providers.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(body, "service_tier").Raw; got != `"flex"` {
			t.Errorf("service_tier %s, want \"flex\"", got)
		}
		if err := providertest.ValidateSpec(t, specFile, schema, body); err != nil {
			t.Errorf("stream %v: %v\n%s", stream, err, body)
		}
	}
	body, _ := New().BuildRequest(providers.Request{Model: "o4-mini", Messages: []json.RawMessage{user}})
	if gjson.GetBytes(body, "service_tier").Exists() {
		t.Errorf("no tier asked, yet %s", body)
	}
	if _, err := New().BuildRequest(providers.Request{Model: "o4-mini", Tier: providers.TierBackground}); !errors.Is(err, providers.ErrKnob) {
		t.Errorf("background on Chat Completions: %v, want ErrKnob", err)
	}
}

// TestFlexResourceUnavailableIsRetried: flex answers 429
// resource_unavailable when it has no room; the request goes again after
// a back-off, as other 429s do.
func TestFlexResourceUnavailableIsRetried(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, body)
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Resource unavailable, please try again later.","type":"server_error","param":null,"code":"resource_unavailable"}}`)
			return
		}
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"o4-mini","service_tier":"flex",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	defer srv.Close()
	var delays []time.Duration
	c := &providers.Caller{Provider: "openai", Protocol: New(), BaseURL: srv.URL, Model: "o4-mini", Key: "fake-test-not-a-real-key-0000",
		Tier: providers.TierFlex, Retries: 2, HTTP: &http.Client{},
		Sleep: func(_ context.Context, d time.Duration) error { delays = append(delays, d); return nil }}
	user, _ := New().UserMessage("hi")
	turn, err := c.Call(context.Background(), providers.Request{Messages: []json.RawMessage{user}}, providers.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if turn.Text != "ok" || len(bodies) != 2 || len(delays) != 1 || delays[0] <= 0 {
		t.Errorf("text %q after %d requests and waits %v; want ok after 2, one back-off", turn.Text, len(bodies), delays)
	}
	for i, b := range bodies {
		if gjson.GetBytes(b, "service_tier").String() != "flex" {
			t.Errorf("request %d: %s", i+1, b)
		}
	}
}
