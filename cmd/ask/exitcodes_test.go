package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
)

// A base URL that is not a URL is bad input, found before any request.
func TestMalformedBaseURLIsUsage(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"http://[::1", "ht!tp://x", "ftp://example.com/v1", "http://"} {
		t.Run(base, func(t *testing.T) {
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "never asked"})
			defer srv.Close()
			for _, how := range [][]string{{"--base-url", base, "q"}, {"q"}} {
				e := askEnv{server: srv}
				if len(how) == 1 {
					e.env = map[string]string{"ASK_BASE_URL": base}
				}
				r := runAsk(t, e, how...)
				if r.code != exitUsage {
					t.Errorf("%v: exit %d, want 2; stderr: %s", how, r.code, r.stderr)
				}
				if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 || !strings.Contains(r.stderr, "base URL") {
					t.Errorf("%v: stderr %q, want one line about the base URL", how, r.stderr)
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests were sent", n)
			}
		})
	}
}

// deepJSON is a JSON array nested n levels deep.
func deepJSON(n int) string {
	return strings.Repeat("[", n) + strings.Repeat("]", n)
}

// A reply nested deeper than a transcript can record is malformed: exit 3,
// with run.finished, and --json does not call it completed.
func TestDeeplyNestedReplyIsMalformed(t *testing.T) {
	t.Parallel()
	deep := `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop",` +
		`"message":{"role":"assistant","content":"hi","extra":` + deepJSON(20000) + `}}]}`
	deepStream := "data: " + `{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi","extra":` +
		deepJSON(20000) + `}}]}` + "\n\ndata: [DONE]\n\n"
	for _, tt := range []struct {
		name string
		body string
		args []string
	}{
		{"plain", deep, []string{"--no-stream"}},
		{"stream", deepStream, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.Start(fakeprovider.Reply{Body: tt.body})
			defer srv.Close()
			transcript := filepath.Join(t.TempDir(), "run.jsonl")
			r := runAsk(t, askEnv{server: srv}, append(tt.args, "--json", "--transcript", transcript, "q")...)
			if r.code != exitProvider {
				t.Errorf("exit %d, want 3; stderr: %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, `"status":"error"`) || !strings.Contains(r.stdout, `"exit_code":3`) {
				t.Errorf("--json = %s", r.stdout)
			}
			if !strings.Contains(lastLine(r.stderr), "nests deeper than") {
				t.Errorf("stderr %q does not say what was wrong", r.stderr)
			}
			evs := readTranscript(t, transcript)
			if last := evs[len(evs)-1]; last.Type != "run.finished" || last.ExitCode != 3 {
				t.Errorf("transcript ends with %v", summarize(evs[len(evs)-1:]))
			}
		})
	}
}

// A stream line longer than ask reads is a provider's fault: exit 3, in a
// run (with run.finished) as in `ask provider send`.
func TestOverlongStreamLineIsProviderError(t *testing.T) {
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
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	r := runAsk(t, askEnv{server: srv}, "--transcript", transcript, "q")
	if r.code != exitProvider {
		t.Errorf("run: exit %d, want 3; stderr: %s", r.code, r.stderr)
	}
	if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 {
		t.Errorf("run: stderr %q, want one line", r.stderr)
	}
	evs := readTranscript(t, transcript)
	if last := evs[len(evs)-1]; last.Type != "run.finished" || last.ExitCode != 3 {
		t.Errorf("transcript ends with %v", summarize(evs[len(evs)-1:]))
	}

	r = runAsk(t, askEnv{server: srv, stdin: `{"model":"m","stream":true,"messages":[]}`, stdout: io.Discard},
		"provider", "send", "-p", "openai")
	if r.code != exitProvider {
		t.Errorf("send: exit %d, want 3; stderr: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "longer than 64 MB") {
		t.Errorf("send: stderr %q does not name the limit", r.stderr)
	}
}

// TestTimeoutBoundsTheInvocation: --timeout counts from the start, so a
// pipe that stays open does not hold the run past it (it is read as
// context), and 0 means no limit.
func TestTimeoutBoundsTheInvocation(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "42"})
	defer srv.Close()
	open, w := io.Pipe() // never written, never closed
	defer w.Close()
	r := runAsk(t, askEnv{server: srv, in: open}, "--timeout", "200ms", "hi")
	if r.code != exitTimeout || !strings.Contains(r.stderr, "--timeout 200ms reached while reading stdin") {
		t.Errorf("open stdin: exit %d, stderr %q; want %d and the line that says why", r.code, r.stderr, exitTimeout)
	}
	if got := len(srv.Requests()); got != 0 {
		t.Errorf("%d requests were sent after the timeout", got)
	}
	if r := runAsk(t, askEnv{server: srv}, "--timeout", "0", "--no-stream", "hi"); r.code != 0 || r.stdout != "42\n" {
		t.Errorf("--timeout 0: exit %d, stdout %q, stderr %q; want the answer", r.code, r.stdout, r.stderr)
	}
}
