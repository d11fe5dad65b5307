package anthropic

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// responseFixtures lists the recorded replies: every stream and every JSON
// body that is not a request or an error.
func responseFixtures(t testing.TB) (replies, errorBodies []string) {
	t.Helper()
	return providertest.Replies(t, func(b []byte) bool { return gjson.GetBytes(b, "type").String() == "error" })
}

// TestGolden parses every recorded reply, streamed or not, into text, calls,
// usage, stop reason and the message to echo.
func TestGolden(t *testing.T) {
	replies, _ := responseFixtures(t)
	if len(replies) != 13 {
		t.Errorf("found %d recorded replies, want 13 (8 JSON + 5 SSE)", len(replies))
	}
	p := New()
	for _, name := range replies {
		t.Run(providertest.Stem(name), func(t *testing.T) {
			body := providertest.Read(t, name)
			if got := providers.IsStreamBody(body, p.Framing()); got != strings.HasSuffix(name, ".sse") {
				t.Fatalf("IsStreamBody = %v, want %v", got, !got)
			}
			turn, err := providers.ParseBody(p, body)
			if err != nil {
				t.Fatalf("ParseBody: %v", err)
			}
			providertest.Golden(t, providertest.Stem(name), providertest.Marshal(t, providertest.RecordTurn(turn)))

			calls, err := p.ParseToolCalls(body)
			if err != nil {
				t.Fatalf("ParseToolCalls: %v", err)
			}
			providertest.SameJSON(t, "ParseToolCalls", providertest.Marshal(t, calls), providertest.Marshal(t, turn.Calls))
		})
	}
}

// TestNonStreamEchoIsVerbatim checks that the echoed content array of every
// non-streamed reply is the response's own bytes.
func TestNonStreamEchoIsVerbatim(t *testing.T) {
	replies, _ := responseFixtures(t)
	p := New()
	for _, name := range replies {
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		body := providertest.Read(t, name)
		turn, err := p.ParseResponse(body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(turn.Messages) != 1 {
			t.Fatalf("%s: %d messages, want 1", name, len(turn.Messages))
		}
		msg := gjson.ParseBytes(turn.Messages[0])
		if got := msg.Get("role").String(); got != "assistant" {
			t.Errorf("%s: role = %q, want assistant", name, got)
		}
		if got, want := msg.Get("content").Raw, gjson.GetBytes(body, "content").Raw; got != want {
			t.Errorf("%s: echoed content is not the response's bytes\n got: %s\nwant: %s", name, got, want)
		}
	}
}

// TestGoldenErrors decodes the recorded error bodies, both as an HTTP error
// and as a body handed to ParseResponse.
func TestGoldenErrors(t *testing.T) {
	_, errorBodies := responseFixtures(t)
	want := map[string]struct {
		status   int
		typ, msg string
	}{
		"pydantic-error-400-invalid-request.json": {400, "invalid_request_error", "This model does not support effort level 'xhigh'. Supported levels: high, low, max, medium."},
		"pydantic-error-404-not-found.json":       {404, "not_found_error", "model: claude-does-not-exist"},
	}
	if len(errorBodies) != len(want) {
		t.Errorf("found error bodies %v, want %d", errorBodies, len(want))
	}
	for _, name := range errorBodies {
		t.Run(providertest.Stem(name), func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			body := providertest.Read(t, name)
			e := providers.DecodeError(w.status, body)
			if e.Type != w.typ || e.Message != w.msg || e.StatusCode != w.status {
				t.Errorf("DecodeError = %+v, want type %q message %q", e, w.typ, w.msg)
			}
			if e.Retryable() {
				t.Errorf("HTTP %d is retryable, want not", w.status)
			}
			providertest.Golden(t, providertest.Stem(name), providertest.Marshal(t, map[string]any{
				"status": e.StatusCode, "type": e.Type, "code": e.Code, "message": e.Message,
				"retryable": e.Retryable(), "error": e.Error(),
			}))

			_, err := New().ParseResponse(body)
			var apiErr *providers.APIError
			if !errors.As(err, &apiErr) || apiErr.Type != w.typ || apiErr.Message != w.msg {
				t.Errorf("ParseResponse error = %v, want an APIError %q", err, w.typ)
			}
		})
	}
}

// TestRetryable pins the retry decisions for Anthropic's error shapes that no
// public cassette recorded: the bodies follow Anthropic's documented format
// (WIRE-FORMATS.md §4, [ANT-529]).
func TestRetryable(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"529 overloaded", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`, true},
		{"429 rate limit", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, true},
		{"429 spend limit", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"You have reached your specified workspace API usage limits.","details":{"error_code":"enforced_spend_limit_reached"}}}`, false},
		{"500 api error", 500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, true},
		{"400 invalid", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := providers.DecodeError(tt.status, []byte(tt.body))
			if got := e.Retryable(); got != tt.want {
				t.Errorf("Retryable() = %v, want %v (decoded %+v)", got, tt.want, e)
			}
			if e.Type == "" || e.Message == "" {
				t.Errorf("DecodeError lost type or message: %+v", e)
			}
		})
	}
}

// TestGoldenFilesAreUsed guards against a golden file left behind by a
// renamed fixture.
func TestGoldenFilesAreUsed(t *testing.T) {
	replies, errorBodies := responseFixtures(t)
	known := map[string]bool{}
	for _, n := range append(replies, errorBodies...) {
		known[providertest.Stem(n)+".json"] = true
	}
	known["attach-user-message.json"] = true // TestUserMessageAttachments
	entries, err := os.ReadDir(filepath.Join("testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	// Directories hold the request goldens, which their own tests use.
	entries = slices.DeleteFunc(entries, os.DirEntry.IsDir)
	var files int
	for _, e := range entries {
		// Request goldens (knobs/) sit in directories of their own.
		if e.IsDir() {
			continue
		}
		files++
		if !known[e.Name()] {
			t.Errorf("testdata/golden/%s has no fixture", e.Name())
		}
	}
	if files != len(known) {
		t.Errorf("%d golden files for %d fixtures", files, len(known))
	}
}
