package responses

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// TestTierRequestsMatchSpec: --tier flex is service_tier "flex" and
// --tier background is background true with store true, each valid by
// CreateResponse in OpenAI's OpenAPI file, whose service_tier enum the
// validator really checks.
func TestTierRequestsMatchSpec(t *testing.T) {
	t.Parallel()
	bad := `{"model":"m","input":"hi","service_tier":"cheapest"}`
	if validateCreateResponse(t, []byte(bad)) == nil {
		t.Fatal("a service_tier outside the enum was accepted: the validator checks nothing")
	}
	user, _ := New().UserMessage("hi")
	tests := []struct {
		tier string
		want map[string]string // path → raw JSON value; "" for absent
	}{
		{"", map[string]string{"service_tier": "", "background": "", "store": "false"}},
		{providers.TierFlex, map[string]string{"service_tier": `"flex"`, "background": "", "store": "false"}},
		{providers.TierBackground, map[string]string{"service_tier": "", "background": "true", "store": "true"}},
	}
	for _, tt := range tests {
		body, err := New().BuildRequest(providers.Request{Model: "gpt-5-mini", Messages: []json.RawMessage{user}, Tier: tt.tier,
			Tools: []providers.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}})
		if err != nil {
			t.Fatalf("%q: %v", tt.tier, err)
		}
		for path, want := range tt.want {
			if got := gjson.GetBytes(body, path).Raw; got != want {
				t.Errorf("%q: %s = %s, want %s", tt.tier, path, got, want)
			}
		}
		if err := validateCreateResponse(t, body); err != nil {
			t.Errorf("%q: %v\n%s", tt.tier, err, body)
		}
	}
	if _, err := New().BuildRequest(providers.Request{Model: "m", Tier: "priority"}); !errors.Is(err, providers.ErrKnob) {
		t.Errorf("an unknown tier: %v, want ErrKnob", err)
	}
}

func TestPending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body    string
		pending bool
	}{
		{`{"id":"resp_1","status":"queued"}`, true},
		{`{"id":"resp_1","status":"in_progress"}`, true},
		{`{"id":"resp_1","status":"completed"}`, false},
		{`{"id":"resp_1","status":"failed"}`, false},
		{`{"id":"resp_1","status":"cancelled"}`, false},
		{`{"id":"resp_1","status":"incomplete"}`, false},
		{`{"status":"queued"}`, false},
		{`not json`, false},
	}
	for _, tt := range tests {
		poll, cancel, pending := New().Pending("https://api.example/v1/", []byte(tt.body))
		if pending != tt.pending {
			t.Errorf("%s: pending %v", tt.body, pending)
		}
		if pending && (poll != "https://api.example/v1/responses/resp_1" || cancel != poll+"/cancel") {
			t.Errorf("%s: poll %s, cancel %s", tt.body, poll, cancel)
		}
	}
}

// backgroundServer is the Responses API in background mode: a created
// response is queued, and reads of it say in_progress until it has been
// read reads times, then completed (or status).
type backgroundServer struct {
	*httptest.Server
	mu       sync.Mutex
	creates  [][]byte
	polls    int
	cancels  int
	reads    int    // reads before the end; -1 never ends
	final    string // the end's status
	onPoll   func(n int)
	userSeen []string
}

func startBackground(t *testing.T, reads int, final string) *backgroundServer {
	s := &backgroundServer{reads: reads, final: final}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		s.mu.Lock()
		defer s.mu.Unlock()
		s.userSeen = append(s.userSeen, r.Header.Get("Authorization"))
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
			body, _ := io.ReadAll(r.Body)
			s.creates = append(s.creates, body)
			io.WriteString(w, backgroundResponse("queued"))
		case r.Method == http.MethodGet && r.URL.Path == "/v1/responses/resp_bg1":
			s.polls++
			if s.onPoll != nil {
				s.onPoll(s.polls)
			}
			if s.reads >= 0 && s.polls > s.reads {
				io.WriteString(w, backgroundResponse(s.final))
				return
			}
			io.WriteString(w, backgroundResponse("in_progress"))
		case r.Method == http.MethodPost && r.URL.Path == "/v1/responses/resp_bg1/cancel":
			s.cancels++
			io.WriteString(w, backgroundResponse("cancelled"))
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"message":"no route","type":"invalid_request_error"}}`)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// backgroundResponse is a Response object in status, with an answer once completed.
func backgroundResponse(status string) string {
	output := `[]`
	errv := `null`
	switch status {
	case "completed":
		output = `[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"hi from the background","annotations":[]}]}]`
	case "failed":
		errv = `{"code":"server_error","message":"the model failed"}`
	}
	return `{"id":"resp_bg1","object":"response","created_at":1764230400,"status":"` + status + `","background":true,"error":` + errv +
		`,"model":"gpt-5-mini","output":` + output + `,"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}`
}

func backgroundCaller(url string) *providers.Caller {
	return &providers.Caller{Provider: "openai-responses", Protocol: New(), BaseURL: url + "/v1", Model: "gpt-5-mini",
		Key: "fake-test-not-a-real-key-0000", Tier: providers.TierBackground, HTTP: &http.Client{},
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}
}

// TestBackgroundPolls: a background request is created once, read again
// until it is done, and its finished body is the step's reply and the one
// response the transcript records.
func TestBackgroundPolls(t *testing.T) {
	t.Parallel()
	s := startBackground(t, 2, "completed")
	c := backgroundCaller(s.URL)
	user, _ := New().UserMessage("hi")
	var requests, responses int
	var recorded []byte
	turn, err := c.Call(context.Background(), providers.Request{Messages: []json.RawMessage{user}}, providers.Hooks{
		OnRequest:  func(string, http.Header, []byte) { requests++ },
		OnResponse: func(_ int, _ http.Header, body []byte) { responses++; recorded = body },
	})
	if err != nil {
		t.Fatal(err)
	}
	if turn.Text != "hi from the background" {
		t.Errorf("text %q", turn.Text)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.creates) != 1 || s.polls != 3 || s.cancels != 0 {
		t.Errorf("%d creates, %d reads, %d cancels; want 1, 3, 0", len(s.creates), s.polls, s.cancels)
	}
	if b := s.creates[0]; gjson.GetBytes(b, "background").Raw != "true" || gjson.GetBytes(b, "store").Raw != "true" || gjson.GetBytes(b, "stream").Exists() {
		t.Errorf("created with %s", b)
	}
	for _, auth := range s.userSeen {
		if auth != "Bearer fake-test-not-a-real-key-0000" {
			t.Errorf("a request with Authorization %q", auth)
		}
	}
	if requests != 1 || responses != 1 || gjson.GetBytes(recorded, "status").String() != "completed" {
		t.Errorf("%d requests and %d responses recorded, the last %s; want one of each, the finished body", requests, responses, recorded)
	}
}

func TestBackgroundFailed(t *testing.T) {
	t.Parallel()
	s := startBackground(t, 1, "failed")
	_, err := backgroundCaller(s.URL).Call(context.Background(), providers.Request{}, providers.Hooks{})
	if err == nil || !strings.Contains(err.Error(), "the model failed") {
		t.Errorf("err %v, want the response's error", err)
	}
}

// TestBackgroundCancelled: a run stopped while its response is queued
// cancels the response.
func TestBackgroundCancelled(t *testing.T) {
	t.Parallel()
	s := startBackground(t, -1, "")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	s.onPoll = func(n int) {
		if n == 2 {
			stop()
		}
	}
	_, err := backgroundCaller(s.URL).Call(ctx, providers.Request{}, providers.Hooks{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancels != 1 {
		t.Errorf("%d cancels, want 1", s.cancels)
	}
}
