package providers_test

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
	"github.com/ask-cli/ask/internal/providers/openai"
	"github.com/ask-cli/ask/internal/providers/textproto"
)

func ptr(f float64) *float64 { return &f }

// What a request leaves unset is the caller's: the model, caching, the
// temperature and the reasoning level; what it sets stays.
func TestCallerBuildFillsTheRunsFields(t *testing.T) {
	t.Parallel()
	c := &providers.Caller{Provider: "openai", Protocol: openai.New(), Model: "gpt-5",
		Cache: providers.Cache{Key: "ask-k"}, Temperature: ptr(0.3), Reasoning: "low"}
	user, _ := c.Protocol.UserMessage("hi")
	tests := []struct {
		name string
		req  providers.Request
		want map[string]string
	}{
		{"unset", providers.Request{Messages: []json.RawMessage{user}},
			map[string]string{"model": "gpt-5", "temperature": "0.3", "reasoning_effort": "low", "prompt_cache_key": "ask-k"}},
		{"set", providers.Request{Model: "o3", Messages: []json.RawMessage{user}, Temperature: ptr(1), Reasoning: "high", Cache: providers.Cache{Key: "mine"}},
			map[string]string{"model": "o3", "temperature": "1", "reasoning_effort": "high", "prompt_cache_key": "mine"}},
	}
	for _, tt := range tests {
		body, err := c.Build(tt.req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for path, want := range tt.want {
			if got := gjson.GetBytes(body, path).String(); got != want {
				t.Errorf("%s: %s = %q, want %q", tt.name, path, got, want)
			}
		}
	}
}

// A caller with a Fallback asks it about a failed call; the protocol it
// gives is used for the retry and from then on, once.
func TestCallerFallback(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies [][]byte
	replies := []struct {
		status int
		body   string
	}{
		{400, `{"error":{"message":"m does not support tools"}}`},
		{200, `{"choices":[{"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}`},
		{400, `{"error":{"message":"m does not support tools"}}`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		reply := replies[min(len(bodies), len(replies))-1]
		mu.Unlock()
		w.WriteHeader(reply.status)
		io.WriteString(w, reply.body)
	}))
	defer srv.Close()
	tools := []providers.Tool{{Name: "read_file"}}
	asked := 0
	c := &providers.Caller{Provider: "p", Protocol: openai.New(), BaseURL: srv.URL, Model: "m",
		Sleep: func(context.Context, time.Duration) error { return nil }}
	c.Fallback = func(err error) providers.Protocol {
		asked++
		var apiErr *providers.APIError
		if !errors.As(err, &apiErr) {
			t.Errorf("fallback asked about %v", err)
		}
		return textproto.Wrap(c.Protocol, textproto.JSON, tools)
	}
	user, _ := c.Protocol.UserMessage("hi")
	req := providers.Request{Messages: []json.RawMessage{user}, Tools: tools}
	turn, err := c.Call(context.Background(), req, providers.Hooks{})
	if err != nil || turn.Text != "hello" {
		t.Fatalf("turn %+v, err %v", turn, err)
	}
	if _, ok := c.Protocol.(*textproto.Protocol); !ok || c.Fallback != nil {
		t.Errorf("after the switch: protocol %T, fallback kept: %v", c.Protocol, c.Fallback != nil)
	}
	mu.Lock()
	n, first, second := len(bodies), bodies[0], bodies[len(bodies)-1]
	mu.Unlock()
	if n != 2 || !gjson.GetBytes(first, "tools").Exists() || gjson.GetBytes(second, "tools").Exists() {
		t.Fatalf("%d requests; the retry must go without native tools: %s, %s", n, first, second)
	}
	if _, err := c.Call(context.Background(), req, providers.Hooks{}); err == nil || asked != 1 {
		t.Errorf("a second refusal: err %v, fallback asked %d times; want an error and 1", err, asked)
	}
}
