package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
)

// signalWriter is stdout that says when it has seen want.
type signalWriter struct {
	mu   sync.Mutex
	buf  strings.Builder
	want string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// `ask provider send` prints a streamed response as it arrives: the server
// sends the rest of its stream only once the first event is on ask's
// stdout. A send that buffered the response would leave the server waiting
// until its fallback, which fails the test.
func TestSendStreamsAsItArrives(t *testing.T) {
	t.Parallel()
	first := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hel\"}}]}\n\n"
	rest := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	out := &signalWriter{want: first, seen: make(chan struct{})}
	buffered := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-out.seen:
			buffered <- false
		case <-time.After(30 * time.Second): // a fallback, not a measurement
			buffered <- true
		}
		io.WriteString(w, rest)
	}))
	defer srv.Close()

	var errb strings.Builder
	env := map[string]string{"ASK_BASE_URL": srv.URL, "OPENAI_API_KEY": "fake-test-not-a-real-key"}
	stdio := &IO{
		In:     strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true}`),
		Out:    out,
		Err:    &errb,
		Getenv: func(k string) string { return env[k] },
		HTTP:   srv.Client(),
		Now:    time.Now,
		Wd:     t.TempDir(),
	}
	code := runCLI(context.Background(), []string{"ask", "provider", "send", "-p", "openai"}, stdio)
	if code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, errb.String())
	}
	if <-buffered {
		t.Fatal("the first event reached stdout only after the whole stream: send buffers the response")
	}
	if got := out.String(); got != first+rest {
		t.Errorf("stdout %q, want the stream byte for byte", got)
	}
}

// A stream that goes silent part-way ends `ask provider send` with the idle
// timeout's error (exit 3), after printing what did arrive.
func TestSendIdleTimeout(t *testing.T) {
	t.Parallel()
	first := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hel\"}}]}\n\n"
	srv := fakeprovider.StartSteps(fakeprovider.StreamThenStall([]byte(first)))
	defer srv.Close()
	r := runAsk(t, askEnv{stdin: `{"model":"m","messages":[],"stream":true}`, env: map[string]string{
		"ASK_BASE_URL": srv.URL, "OPENAI_API_KEY": "fake-test-not-a-real-key",
	}, idle: 200 * time.Millisecond}, "provider", "send", "-p", "openai")
	if r.code != exitProvider || !strings.Contains(r.stderr, "no data from the provider within the idle timeout (200ms)") {
		t.Fatalf("exit %d, stderr %q; want %d and the idle timeout", r.code, r.stderr, exitProvider)
	}
	if r.stdout != first {
		t.Errorf("stdout %q, want what arrived before the silence", r.stdout)
	}
}

// A stream line longer than ask reads is a provider's fault in `ask
// provider send` too: exit 3, naming the limit. (A run's is internal/run's
// TestOverlongStreamLineIsProviderError.)
func TestOverlongStreamLineInSend(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it waits out a stream")
	}
	t.Parallel()
	overlong := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: ")
		chunk := []byte(strings.Repeat("x", 1<<20))
		for range 65 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	srv := fakeprovider.StartSteps(overlong)
	defer srv.Close()

	r := runAsk(t, askEnv{server: srv, stdin: `{"model":"m","stream":true,"messages":[]}`, stdout: io.Discard},
		"provider", "send", "-p", "openai")
	if r.code != exitProvider {
		t.Errorf("send: exit %d, want 3; stderr: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "longer than 64 MB") {
		t.Errorf("send: stderr %q does not name the limit", r.stderr)
	}
}
