package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// responseFixtures lists the recorded replies: every SSE stream, every
// stream array and every JSON body that is not a request or an error.
func responseFixtures(t testing.TB) (replies, errorBodies []string) {
	t.Helper()
	return providertest.Replies(t, func(b []byte) bool { return gjson.GetBytes(b, "error").Exists() })
}

func isArrayFixture(name string) bool { return strings.HasSuffix(name, ".stream-array.json") }

// TestGolden parses every recorded reply, SSE stream, stream array or plain
// response, into text, calls, usage, stop reason and the content to echo.
func TestGolden(t *testing.T) {
	replies, _ := responseFixtures(t)
	if len(replies) != 13 {
		t.Errorf("found %d recorded replies, want 13 (7 JSON + 2 stream arrays + 4 SSE)", len(replies))
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
			// Whether a tool was called is read from the parts: every
			// recorded reply says STOP, calls or not.
			if turn.StopReason != "STOP" {
				t.Errorf("StopReason = %q, want STOP", turn.StopReason)
			}
			if want := strings.Count(string(body), `"functionCall"`); len(turn.Calls) != want {
				t.Errorf("%d calls, want one per functionCall part (%d)", len(turn.Calls), want)
			}
		})
	}
}

// TestNonStreamEchoIsVerbatim: the echoed content of every plain response
// is the response's own candidates[0].content, byte for byte.
func TestNonStreamEchoIsVerbatim(t *testing.T) {
	replies, _ := responseFixtures(t)
	p := New()
	n := 0
	for _, name := range replies {
		if !strings.HasSuffix(name, ".json") || isArrayFixture(name) {
			continue
		}
		n++
		body := providertest.Read(t, name)
		turn, err := p.ParseResponse(body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(turn.Messages) != 1 {
			t.Fatalf("%s: %d messages, want 1", name, len(turn.Messages))
		}
		want := gjson.GetBytes(body, "candidates.0.content").Raw
		providertest.SameBytes(t, name+": echoed content", turn.Messages[0], []byte(want))
	}
	if n != 7 {
		t.Errorf("checked %d plain responses, want 7", n)
	}
}

// TestStreamFormsAgree: the stream-array form read by ParseResponse and the
// same chunks sent as SSE give the same turn.
func TestStreamFormsAgree(t *testing.T) {
	for _, name := range providertest.Fixtures(t, ".stream-array.json") {
		body := providertest.Read(t, name)
		fromArray, err := New().ParseResponse(body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var sse bytes.Buffer
		for _, chunk := range gjson.ParseBytes(body).Array() {
			var compact bytes.Buffer
			if err := json.Compact(&compact, []byte(chunk.Raw)); err != nil {
				t.Fatal(err)
			}
			sse.WriteString("data: " + compact.String() + "\r\n\r\n")
		}
		fromSSE, err := providers.ReadStream(&sse, providers.SSE, New().NewStream(), nil)
		if err != nil {
			t.Fatalf("%s as SSE: %v", name, err)
		}
		// Compacting changes the bytes of verbatim parts and arguments, not
		// their meaning.
		providertest.SameJSON(t, name, providertest.Marshal(t, meaning(t, fromSSE)), providertest.Marshal(t, meaning(t, fromArray)))
	}
}

// meaning is a turn with its arguments decoded and without generated ids
// (which hash the reply's bytes), for comparing turns whose JSON differs
// only in spacing.
func meaning(t *testing.T, turn *providers.Turn) any {
	t.Helper()
	var calls []any
	for _, c := range turn.Calls {
		var args any
		if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
			t.Fatalf("call %s arguments: %v", c.ID, err)
		}
		id := c.ID
		if isGeneratedID(id) {
			id = "generated"
		}
		calls = append(calls, map[string]any{"id": id, "name": c.Name, "args": args})
	}
	return map[string]any{"text": turn.Text, "reasoning": turn.Reasoning, "calls": calls,
		"usage": turn.Usage, "stop": turn.StopReason, "messages": turn.Messages}
}

// TestGoldenErrors decodes the recorded error body, both as an HTTP error
// and as a body handed to ParseResponse.
func TestGoldenErrors(t *testing.T) {
	_, errorBodies := responseFixtures(t)
	if len(errorBodies) != 1 || errorBodies[0] != "pydantic-error-404-not-found.json" {
		t.Fatalf("error bodies = %v, want the recorded 404", errorBodies)
	}
	name := errorBodies[0]
	body := providertest.Read(t, name)
	wantMsg := "models/nonexistent-model is not found for API version v1beta, or is not supported for embedContent. Call ListModels to see the list of available models and their supported methods."
	e := providers.DecodeError(404, body)
	if e.Type != "NOT_FOUND" || e.Message != wantMsg || e.Code != "404" || e.Retryable() || e.IsAuth() {
		t.Errorf("DecodeError = %+v", e)
	}
	providertest.Golden(t, providertest.Stem(name), providertest.Marshal(t, map[string]any{
		"status": e.StatusCode, "type": e.Type, "code": e.Code, "message": e.Message,
		"retryable": e.Retryable(), "error": e.Error(),
	}))

	_, err := New().ParseResponse(body)
	var apiErr *providers.APIError
	if !errors.As(err, &apiErr) || apiErr.Type != "NOT_FOUND" || apiErr.StatusCode != 404 || apiErr.Message != wantMsg {
		t.Errorf("ParseResponse error = %v, want the 404 as an APIError", err)
	}
}

// TestErrorMapping pins the decisions for Gemini's error statuses that no
// cassette recorded; the bodies follow the google.rpc.Status envelope
// (WIRE-FORMATS.md §5).
func TestErrorMapping(t *testing.T) {
	tests := []struct {
		name            string
		status          int
		body            string
		retryable, auth bool
	}{
		{"429 quota", 429, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`, true, false},
		{"503 overloaded", 503, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`, true, false},
		{"400 bad key", 400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`, false, false},
		{"403 denied", 403, `{"error":{"code":403,"message":"Method doesn't allow unregistered callers.","status":"PERMISSION_DENIED"}}`, false, true},
		{"400 schema", 400, `{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"additionalProperties\"","status":"INVALID_ARGUMENT"}}`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := providers.DecodeError(tt.status, []byte(tt.body))
			if e.Retryable() != tt.retryable || e.IsAuth() != tt.auth {
				t.Errorf("Retryable %v IsAuth %v, want %v %v (decoded %+v)", e.Retryable(), e.IsAuth(), tt.retryable, tt.auth, e)
			}
			if e.Type == "" || e.Message == "" {
				t.Errorf("DecodeError lost status or message: %+v", e)
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
