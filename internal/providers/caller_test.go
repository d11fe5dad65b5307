package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// echoProtocol is the smallest protocol: the request body is the prompt, the
// response body's "text" is the answer, and streams are SSE lines of text.
type echoProtocol struct{}

func (echoProtocol) Name() string                                               { return "echo" }
func (echoProtocol) FormatTools([]Tool) (json.RawMessage, error)                { return nil, nil }
func (echoProtocol) ParseToolCalls([]byte) ([]ToolCall, error)                  { return nil, nil }
func (echoProtocol) FormatToolResults([]ToolResult) ([]json.RawMessage, error)  { return nil, nil }
func (echoProtocol) UserMessage(string, ...Attachment) (json.RawMessage, error) { return nil, nil }
func (echoProtocol) BuildRequest(r Request) ([]byte, error) {
	return []byte(`{"model":"` + r.Model + `"}`), nil
}
func (echoProtocol) Framing() Framing                       { return SSE }
func (echoProtocol) Endpoint(base, _ string, _ bool) string { return base + "/x" }
func (echoProtocol) Authorize(h http.Header, key string)    { h.Set("Authorization", "Bearer "+key) }
func (echoProtocol) HistoryField() string                   { return "messages" }
func (echoProtocol) NewStream() Stream                      { return &echoStream{} }
func (echoProtocol) ParseResponse(body []byte) (*Turn, error) {
	var v struct{ Text string }
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, Malformed("%v", err)
	}
	return &Turn{Text: v.Text}, nil
}

type echoStream struct {
	text string
	done bool
}

func (s *echoStream) Add(ev Event) (string, error) {
	if string(ev.Data) == "[DONE]" {
		s.done = true
		return "", nil
	}
	if e := StreamError(ev.Data); e != nil {
		return "", e
	}
	s.text += string(ev.Data)
	return string(ev.Data), nil
}
func (s *echoStream) Done() bool { return s.done }
func (s *echoStream) Turn() (*Turn, error) {
	if !s.done {
		return nil, ErrStreamCut
	}
	return &Turn{Text: s.text}, nil
}

// serve answers the n-th request with handlers[n] (the last one repeats).
func serve(t *testing.T, handlers ...http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		handlers[min(i, len(handlers)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func status(code int, header map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// hangUp closes the connection without answering.
func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, _ := w.(http.Hijacker).Hijack()
	conn.Close()
}

func ok(text string) http.HandlerFunc { return status(200, nil, `{"text":"`+text+`"}`) }

func TestRetries(t *testing.T) {
	httpDate := time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name       string
		handlers   []http.HandlerFunc
		retries    int
		wantErr    string // "" for success
		wantCalls  int32
		wantDelays []time.Duration // exact where the server said; <0 means "backoff"
	}{
		{"429 then success", []http.HandlerFunc{status(429, map[string]string{"Retry-After": "2"}, `{"error":{"message":"slow down"}}`), ok("hi")}, 2, "", 2, []time.Duration{2 * time.Second}},
		{"Retry-After-Ms wins", []http.HandlerFunc{status(503, map[string]string{"Retry-After-Ms": "150", "Retry-After": "9"}, ""), ok("hi")}, 2, "", 2, []time.Duration{150 * time.Millisecond}},
		{"Retry-After as HTTP date", []http.HandlerFunc{status(429, map[string]string{"Retry-After": httpDate}, ""), ok("hi")}, 2, "", 2, []time.Duration{-1}},
		{"529 overloaded is retried", []http.HandlerFunc{status(529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), ok("hi")}, 2, "", 2, []time.Duration{-1}},
		{"500 HTML exhausts retries", []http.HandlerFunc{status(500, nil, "<html><title>Internal Server Error</title></html>")}, 2, "/x: HTML page: Internal Server Error", 3, []time.Duration{-1, -1}},
		{"400 is never retried", []http.HandlerFunc{status(400, nil, `{"error":{"message":"bad"}}`), ok("no")}, 2, "HTTP 400", 1, nil},
		{"x-should-retry false", []http.HandlerFunc{status(503, map[string]string{"X-Should-Retry": "false"}, ""), ok("no")}, 2, "HTTP 503", 1, nil},
		{"a wait over a minute fails at once", []http.HandlerFunc{status(429, map[string]string{"Retry-After": "3600"}, ""), ok("no")}, 2, "HTTP 429", 1, nil},
		{"a wait too long to represent fails at once", []http.HandlerFunc{status(429, map[string]string{"Retry-After": "10000000000"}, ""), ok("no")}, 2, "HTTP 429", 1, nil},
		{"a wait of 1e308 seconds fails at once", []http.HandlerFunc{status(503, map[string]string{"Retry-After": "1e308"}, ""), ok("no")}, 2, "HTTP 503", 1, nil},
		{"an infinite wait fails at once", []http.HandlerFunc{status(503, map[string]string{"Retry-After": "Inf"}, ""), ok("no")}, 2, "HTTP 503", 1, nil},
		{"a huge Retry-After-Ms fails at once", []http.HandlerFunc{status(429, map[string]string{"Retry-After-Ms": "1e300"}, ""), ok("no")}, 2, "HTTP 429", 1, nil},
		{"zero retries", []http.HandlerFunc{status(502, nil, ""), ok("no")}, 0, "HTTP 502", 1, nil},
		{"408 is retried", []http.HandlerFunc{status(408, nil, ""), ok("hi")}, 2, "", 2, []time.Duration{-1}},
		{"409 is retried", []http.HandlerFunc{status(409, nil, `{"error":{"message":"conflict"}}`), ok("hi")}, 2, "", 2, []time.Duration{-1}},
		{"504 is retried", []http.HandlerFunc{status(504, nil, ""), status(503, nil, ""), ok("hi")}, 2, "", 3, []time.Duration{-1, -1}},
		{"401 is never retried", []http.HandlerFunc{status(401, nil, `{"error":{"message":"bad key"}}`), ok("no")}, 2, "HTTP 401", 1, nil},
		{"403 is never retried", []http.HandlerFunc{status(403, nil, ""), ok("no")}, 2, "HTTP 403", 1, nil},
		{"404 is never retried", []http.HandlerFunc{status(404, nil, ""), ok("no")}, 2, "HTTP 404", 1, nil},
		{"413 is never retried", []http.HandlerFunc{status(413, nil, ""), ok("no")}, 2, "HTTP 413", 1, nil},
		{"422 is never retried", []http.HandlerFunc{status(422, nil, ""), ok("no")}, 2, "HTTP 422", 1, nil},
		{"a spend limit is never retried", []http.HandlerFunc{status(429, nil, `{"type":"error","error":{"type":"rate_limit_error","message":"limit","details":{"error_code":"enforced_spend_limit_reached"}}}`), ok("no")}, 2, "HTTP 429", 1, nil},
		{"Retry-After in the past falls back to backoff", []http.HandlerFunc{status(429, map[string]string{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, ""), ok("hi")}, 2, "", 2, []time.Duration{-1}},
		{"closed before answering is retried", []http.HandlerFunc{hangUp, ok("hi")}, 2, "", 2, []time.Duration{-1}},
		{"closed before answering every time", []http.HandlerFunc{hangUp}, 1, "connection to the provider failed", 2, []time.Duration{-1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := serve(t, tt.handlers...)
			var delays []time.Duration
			var retryEvents int
			c := &Caller{Provider: "p", Protocol: echoProtocol{}, BaseURL: srv.URL, Model: "m", Retries: tt.retries,
				Sleep: func(_ context.Context, d time.Duration) error { delays = append(delays, d); return nil }}
			turn, err := c.Call(context.Background(), Request{}, Hooks{OnRetry: func(int, time.Duration, error) { retryEvents++ }})
			if tt.wantErr == "" && (err != nil || turn.Text != "hi") {
				t.Fatalf("Call = %v, %v; want hi", turn, err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if calls.Load() != tt.wantCalls {
				t.Errorf("%d requests, want %d", calls.Load(), tt.wantCalls)
			}
			if len(delays) != len(tt.wantDelays) || retryEvents != len(delays) {
				t.Fatalf("delays %v (%d retry hooks), want %d", delays, retryEvents, len(tt.wantDelays))
			}
			for i, want := range tt.wantDelays {
				switch {
				case want >= 0 && delays[i] != want:
					t.Errorf("delay %d = %v, want %v", i, delays[i], want)
				case want < 0 && (delays[i] <= 0 || delays[i] > 8*time.Second):
					t.Errorf("delay %d = %v, want a bounded backoff", i, delays[i])
				}
			}
		})
	}
}

func TestBackoffGrowsWithJitter(t *testing.T) {
	for attempt := range 8 {
		d := backoff(attempt, 0)
		ceiling := 500 * time.Millisecond << min(attempt, 4)
		if d > ceiling || d < ceiling*3/4 {
			t.Errorf("backoff(%d) = %v, want within [%v, %v]", attempt, d, ceiling*3/4, ceiling)
		}
	}
}

func TestConnectionErrorsAreRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: connection refused
	var retries int
	c := &Caller{Provider: "p", Protocol: echoProtocol{}, BaseURL: "http://" + addr, Retries: 2,
		Sleep: func(context.Context, time.Duration) error { retries++; return nil }}
	_, err = c.Call(context.Background(), Request{}, Hooks{})
	if err == nil || retries != 2 || !strings.Contains(err.Error(), "connect") {
		t.Errorf("err %v after %d retries, want a connection error after 2", err, retries)
	}
	if strings.Contains(err.Error(), "Post ") {
		t.Errorf("error repeats the URL: %v", err)
	}
}

func TestStreams(t *testing.T) {
	cut := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: par\n\n")
		w.(http.Flusher).Flush()
		// Hijack and drop the connection mid-stream.
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
		wantErr error
	}{
		{"whole stream", status(200, map[string]string{"Content-Type": "text/event-stream"}, "data: a\n\ndata: b\n\ndata: [DONE]\n\n"), "ab", nil},
		{"UTF-8 split across chunks", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			b := []byte("data: é€\n\ndata: [DONE]\n\n")
			for i := range b {
				w.Write(b[i : i+1])
				w.(http.Flusher).Flush()
			}
		}, "é€", nil},
		{"JSON answer to a stream request", ok("plain"), "plain", nil},
		{"ended without [DONE]", status(200, map[string]string{"Content-Type": "text/event-stream"}, "data: a\n\n"), "", ErrStreamCut},
		{"connection reset mid-stream", cut, "", ErrStreamCut},
		{"JSON body cut short", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, `{"text":"par`)
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, "", ErrStreamCut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := serve(t, tt.handler)
			var live strings.Builder
			var recorded []byte
			c := &Caller{Provider: "p", Protocol: echoProtocol{}, BaseURL: srv.URL, Retries: 2, Sleep: func(context.Context, time.Duration) error { return nil }}
			turn, err := c.Call(context.Background(), Request{Stream: true}, Hooks{
				OnDelta:    func(s string) { live.WriteString(s) },
				OnResponse: func(_ int, _ http.Header, b []byte) { recorded = b },
			})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if calls.Load() != 1 {
					t.Errorf("a stream cut after it began was retried (%d requests)", calls.Load())
				}
				if len(recorded) == 0 {
					t.Error("the partial response was not handed to OnResponse")
				}
				return
			}
			if err != nil || turn.Text != tt.want || live.String() != tt.want {
				t.Errorf("turn %v live %q err %v, want %q", turn, live.String(), err, tt.want)
			}
		})
	}
}

func TestIdleTimeout(t *testing.T) {
	release := make(chan struct{})
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: a\n\n")
		w.(http.Flusher).Flush()
		select { // goes silent
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := &Caller{Provider: "p", Protocol: echoProtocol{}, BaseURL: srv.URL, IdleTimeout: 50 * time.Millisecond}
	_, err := c.Call(context.Background(), Request{Stream: true}, Hooks{})
	if !errors.Is(err, ErrIdle) {
		t.Errorf("err = %v, want ErrIdle", err)
	}
}

func TestRedact(t *testing.T) {
	h := http.Header{"Authorization": {"Bearer fake-secret"}, "X-Api-Key": {"k"}, "X-Goog-Api-Key": {"g"}, "Content-Type": {"application/json"}}
	r := Redact(h)
	for _, k := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key"} {
		if r.Get(k) != "[redacted]" {
			t.Errorf("%s = %q, want redacted", k, r.Get(k))
		}
	}
	if r.Get("Content-Type") != "application/json" || h.Get("Authorization") != "Bearer fake-secret" {
		t.Error("Redact changed what it should not")
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{map[string]string{"Retry-After": " 1.5 "}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-3"}, 0},
		{map[string]string{"Retry-After-Ms": "250"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "0.5"}, 500 * time.Microsecond},
		{map[string]string{"Retry-After-Ms": "x", "Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After-Ms": "100", "Retry-After": "2"}, 100 * time.Millisecond},
		// Waits too long for a Duration are clamped, never wrapped round
		// into a negative that reads as "absent".
		{map[string]string{"Retry-After": "10000000000"}, math.MaxInt64},
		{map[string]string{"Retry-After": "1e308"}, math.MaxInt64},
		{map[string]string{"Retry-After": "+Inf"}, math.MaxInt64},
		{map[string]string{"Retry-After": "NaN"}, 0},
		{map[string]string{"Retry-After-Ms": "1e300"}, math.MaxInt64},
		{map[string]string{"Retry-After-Ms": "9223372036854775807"}, math.MaxInt64},
		{map[string]string{"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}, math.MaxInt64},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		if got := parseRetryAfter(h, now); got != tt.want {
			t.Errorf("parseRetryAfter(%v) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

// A proxy that echoes the request's headers in its error page must not
// carry the key into errors, recorded responses or recorded URLs.
func TestKeyIsHiddenInEchoes(t *testing.T) {
	const key = "fake-distinctive-0123456789"
	echo := func(code int, stream bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if stream {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"error\":{\"message\":\"bad header %s\"}}\n\n", r.Header.Get("Authorization"))
				return
			}
			w.WriteHeader(code)
			fmt.Fprintf(w, "<html><body>Authorization: %s; url %s</body></html>", r.Header.Get("Authorization"), r.URL)
		}
	}
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		stream  bool
	}{
		{"4xx page", echo(400, false), false},
		{"5xx page after retries", echo(502, false), false},
		{"error event in a stream", echo(200, true), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, tt.handler)
			var seen []string
			c := &Caller{Provider: "p", Protocol: echoProtocol{}, BaseURL: srv.URL + "/?key=" + key, Key: key, Retries: 1,
				Sleep: func(context.Context, time.Duration) error { return nil }}
			_, err := c.Call(context.Background(), Request{Stream: tt.stream}, Hooks{
				OnRequest: func(url string, h http.Header, body []byte) {
					seen = append(seen, url, fmt.Sprint(h), string(body))
				},
				OnResponse: func(_ int, h http.Header, body []byte) { seen = append(seen, fmt.Sprint(h), string(body)) },
				OnRetry:    func(_ int, _ time.Duration, err error) { seen = append(seen, err.Error()) },
			})
			if err == nil {
				t.Fatal("no error")
			}
			seen = append(seen, err.Error())
			for _, s := range seen {
				if strings.Contains(s, key) {
					t.Errorf("the key leaks: %s", s)
				}
			}
			if !strings.Contains(err.Error(), "[redacted]") {
				t.Errorf("error %q does not show where the key was", err)
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("hiding the key lost the error's kind: %T", err)
			}
			if strings.Contains(apiErr.Error(), key) {
				t.Errorf("the wrapped APIError still holds the key: %v", apiErr)
			}
		})
	}
}
