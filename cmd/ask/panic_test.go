package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/records"
)

// faultyBody gives some bytes of a reply, then panics: a stand-in for a
// fault in ask between the provider's bytes and the loop, since no reply
// is known to make a parser panic now.
type faultyBody struct{ r io.Reader }

func (b *faultyBody) Read(p []byte) (int, error) {
	if n, _ := b.r.Read(p); n > 0 {
		return n, nil
	}
	panic("fault while reading the reply")
}

func (*faultyBody) Close() error { return nil }

type faultyTransport struct{ contentType, prefix string }

func (t faultyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {t.contentType}},
		Body: &faultyBody{strings.NewReader(t.prefix)}, Request: req}, nil
}

// A panic while a reply is read, streamed or not, ends the run with exit 3
// (a malformed response) and a one-line message, never a stack trace, and
// the transcript still ends with run.finished.
func TestFaultReadingAReplyIsAnError(t *testing.T) {
	for _, tt := range []struct {
		name string
		t    faultyTransport
		args []string
	}{
		{"streamed", faultyTransport{"text/event-stream", "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"}, nil},
		{"not streamed", faultyTransport{"application/json", `{"choices":[`}, []string{"--no-stream"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			transcript := filepath.Join(t.TempDir(), "run.jsonl")
			env := map[string]string{"ASK_PROVIDER": "openai", "ASK_BASE_URL": "http://provider.invalid/v1",
				"OPENAI_API_KEY": "fake-test-not-a-real-key-0000"}
			args := append([]string{"--transcript", transcript}, tt.args...)
			r := runAsk(t, askEnv{env: env, transport: tt.t}, append(args, "hello")...)
			if r.code != exitProvider || !strings.Contains(r.stderr, "malformed response") || strings.Contains(r.stderr, "goroutine") {
				t.Fatalf("exit %d, stderr %q; want exit %d and a malformed response, without a stack trace", r.code, r.stderr, exitProvider)
			}
			f, err := os.Open(transcript)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			events, err := records.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			if last := events[len(events)-1]; last.Type != records.TypeRunFinished || last.Status != "error" {
				t.Errorf("last event %+v: want run.finished with status error", last)
			}
		})
	}
}
