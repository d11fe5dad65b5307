package providers

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestReadSSE(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Event
	}{
		{"lf", "data: a\n\ndata: b\n\n", []Event{{Data: []byte("a")}, {Data: []byte("b")}}},
		{"crlf framing", "data: a\r\n\r\ndata: b\r\n\r\n", []Event{{Data: []byte("a")}, {Data: []byte("b")}}},
		{"comments and event names", ": keep-alive\n\nevent: ping\ndata: {}\n\n: OPENROUTER PROCESSING\n\n", []Event{{Name: "ping", Data: []byte("{}")}}},
		{"multi-line data joined", "data: a\ndata: b\n\n", []Event{{Data: []byte("a\nb")}}},
		{"one space stripped", "data:  x\n\ndata:y\n\n", []Event{{Data: []byte(" x")}, {Data: []byte("y")}}},
		{"last event without blank line", "data: end", []Event{{Data: []byte("end")}}},
		{"event without data skipped", "event: x\n\ndata: 1\n\n", []Event{{Data: []byte("1")}}},
	}
	for _, tt := range tests {
		var got []Event
		err := ReadSSE(strings.NewReader(tt.in), func(ev Event) error { got = append(got, ev); return nil })
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: ReadSSE = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func TestReadSSEStopsAndFails(t *testing.T) {
	n := 0
	err := ReadSSE(strings.NewReader("data: 1\n\ndata: 2\n\n"), func(Event) error { n++; return ErrStop })
	if err != nil || n != 1 {
		t.Errorf("ErrStop: n=%d err=%v, want 1 event and no error", n, err)
	}
	boom := errors.New("boom")
	if err := ReadNDJSON(strings.NewReader("{}\n{}\n"), func(Event) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("ReadNDJSON error = %v, want boom", err)
	}
}

func TestIsStreamBody(t *testing.T) {
	tests := []struct {
		body string
		f    Framing
		want bool
	}{
		{"data: {}\n\n", SSE, true},
		{"\n\n: keep-alive\n\ndata: {}", SSE, true},
		{`{"choices":[]}`, SSE, false},
		{"{\"a\":1}\n{\"b\":2}\n", NDJSON, true},
		{"{\n  \"message\": {\"content\": \"pretty\"},\n  \"done\": true\n}\n", NDJSON, false},
		{`{"done":true}`, NDJSON, false},
	}
	for _, tt := range tests {
		if got := IsStreamBody([]byte(tt.body), tt.f); got != tt.want {
			t.Errorf("IsStreamBody(%q) = %v, want %v", tt.body, got, tt.want)
		}
	}
}

func TestDecodeError(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		wantMsg   string
		wantType  string
		retryable bool
		auth      bool
	}{
		{"openai", 400, `{"error":{"message":"bad role","type":"invalid_request_error","param":"messages[0].role","code":"unsupported_value"}}`, "bad role", "invalid_request_error", false, false},
		{"openrouter numeric code", 429, `{"error":{"code":429,"message":"Rate limited","metadata":{"raw":"upstream busy"}}}`, "Rate limited (upstream busy)", "", true, false},
		{"anthropic", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded", "overloaded_error", true, false},
		{"anthropic spend limit", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"limit","details":{"error_code":"enforced_spend_limit_reached"}}}`, "limit", "rate_limit_error", false, false},
		{"gemini", 404, `{"error":{"code":404,"message":"model not found","status":"NOT_FOUND"}}`, "model not found", "NOT_FOUND", false, false},
		{"ollama string", 500, `{"error":"model crashed"}`, "model crashed", "", true, false},
		{"html page", 502, "<html><head><title>502 Bad Gateway</title></head></html>", "HTML page: 502 Bad Gateway", "", true, false},
		{"empty", 503, "", "Service Unavailable", "", true, false},
		{"auth", 401, `{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}`, "Incorrect API key", "invalid_request_error", false, true},
	}
	for _, tt := range tests {
		e := DecodeError(tt.status, []byte(tt.body))
		if e.Message != tt.wantMsg || e.Type != tt.wantType || e.Retryable() != tt.retryable || e.IsAuth() != tt.auth {
			t.Errorf("%s: got message %q type %q retryable %v auth %v", tt.name, e.Message, e.Type, e.Retryable(), e.IsAuth())
		}
	}
}

func TestStreamError(t *testing.T) {
	tests := []struct {
		data string
		want string // "" for no error
	}{
		{`{"choices":[]}`, ""},
		{`{"id":"resp","error":null,"status":"completed"}`, ""},
		{`{"error":{"code":400,"message":"Token limit reached"},"choices":[]}`, "Token limit reached"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded"},
		{`{"type":"error","code":"server_error","message":"boom","sequence_number":3}`, "boom"},
		{`{"error":"model not loaded"}`, "model not loaded"},
	}
	for _, tt := range tests {
		e := StreamError([]byte(tt.data))
		switch {
		case tt.want == "" && e != nil:
			t.Errorf("StreamError(%s) = %v, want none", tt.data, e)
		case tt.want != "" && (e == nil || e.Message != tt.want):
			t.Errorf("StreamError(%s) = %v, want message %q", tt.data, e, tt.want)
		}
	}
}

// rejectedKeyBodies are the bodies providers answer a bad key with, in the
// shapes their documentation and SDKs give, with the status they come with.
var rejectedKeyBodies = []struct {
	name   string
	status int
	body   string
}{
	{"openai", 401, `{"error":{"message":"Incorrect API key provided: sk-abc***xyz.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
	{"gemini", 400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`},
	{"anthropic", 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011"}`},
	{"openrouter", 401, `{"error":{"message":"No auth credentials found","code":401}}`},
	{"deepseek", 401, `{"error":{"message":"Authentication Fails, Your api key is invalid","type":"authentication_error","param":null,"code":"invalid_request_error"}}`},
	{"moonshot", 401, `{"error":{"message":"Invalid Authentication","type":"invalid_authentication_error"}}`},
	{"ollama cloud", 401, `{"error":"unauthorized"}`},
}

// TestRejectedKeyFromTheBody: a rejected key is recognised by what the body
// says, with the status a run sees and without one (a stage's input).
func TestRejectedKeyFromTheBody(t *testing.T) {
	t.Parallel()
	for _, tt := range rejectedKeyBodies {
		for _, status := range []int{tt.status, 0} {
			if e := DecodeError(status, []byte(tt.body)); !e.IsAuth() {
				t.Errorf("%s, status %d: %+v is not a rejected key", tt.name, status, e)
			}
		}
	}
	// Errors that name no key stay provider errors, whatever their code.
	for _, body := range []string{
		`{"error":{"code":400,"message":"Token limit reached"}}`,
		`{"error":{"code":403,"message":"Input flagged by moderation","metadata":{"reasons":["violence"]}}}`,
		`{"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest"}]}}`,
		`{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED"}]}}`,
		`{"error":"model 'x' not found"}`,
	} {
		if e := DecodeError(0, []byte(body)); e.IsAuth() {
			t.Errorf("%s is taken for a rejected key", body)
		}
	}
}
