package responses

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// isErrorFixture tells the recorded error bodies (HTTP 400s) from responses.
func isErrorFixture(name string) bool { return strings.Contains(name, "-error-") }

// responseFixtures lists the recorded response bodies and streams: every
// .json that is not a request or an error, and every .sse.
func responseFixtures(t testing.TB) []string {
	t.Helper()
	var names []string
	for _, n := range providertest.Fixtures(t, ".json") {
		if !strings.HasSuffix(n, ".request.json") && !isErrorFixture(n) {
			names = append(names, n)
		}
	}
	return append(names, providertest.Fixtures(t, ".sse")...)
}

// TestGolden parses every recorded response and stream into the standardized
// calls, text, usage, stop reason and replay history.
func TestGolden(t *testing.T) {
	p := New()
	names := responseFixtures(t)
	if len(names) != 16 {
		t.Errorf("found %d response fixtures, want 16 (11 responses, 5 streams)", len(names))
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			body := providertest.Read(t, name)
			turn, err := providers.ParseBody(p, body)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			providertest.Golden(t, strings.TrimSuffix(name, ".json"), turnJSON(t, turn))

			calls, err := p.ParseToolCalls(body)
			if err != nil {
				t.Fatalf("ParseToolCalls: %v", err)
			}
			if !reflect.DeepEqual(calls, turn.Calls) {
				t.Errorf("ParseToolCalls = %v, want the turn's calls %v", calls, turn.Calls)
			}
			for i, c := range turn.Calls {
				if c.ID == "" || c.Name == "" {
					t.Errorf("call %d has an empty id or name: %+v", i, c)
				}
			}
		})
	}
}

// TestStreamDeltas checks that a stream's text deltas add up to its text,
// whether or not the stream names its events (OpenRouter does not).
func TestStreamDeltas(t *testing.T) {
	p := New()
	for _, name := range providertest.Fixtures(t, ".sse") {
		t.Run(name, func(t *testing.T) {
			var shown strings.Builder
			turn, err := providers.ReadStream(bytes.NewReader(providertest.Read(t, name)), p.Framing(), p.NewStream(), func(d string) { shown.WriteString(d) })
			if err != nil {
				t.Fatal(err)
			}
			if shown.String() != turn.Text {
				t.Errorf("deltas %q, text %q", shown.String(), turn.Text)
			}
		})
	}
}

// TestErrorBodies reads the recorded 400 bodies through providers.DecodeError,
// as the caller does, and through ParseResponse. DeepSeek served its 400 as
// application/octet-stream; the body is read as JSON regardless.
func TestErrorBodies(t *testing.T) {
	tests := []struct {
		name                   string
		typ, code, wantMessage string
	}{
		{"pydantic-error-400-reasoning-without-following-item.json", "invalid_request_error", "",
			"Item 'rs_68c42de022c881948db7ed1cc2529f2e0202c9ad459e0d23' of type 'reasoning' was provided without its required following item."},
		{"pydantic-error-400-stream-request-bad-param.json", "invalid_request_error", "decimal_below_min_value",
			"Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 instead."},
		{"pydantic-responses-api-error-400-missing-tool-output.json", "invalid_request_error", "invalid_request_error",
			"No tool output found for tool call call-a."},
	}
	var seen int
	for _, n := range providertest.Fixtures(t, ".json") {
		if isErrorFixture(n) && !strings.HasSuffix(n, ".request.json") {
			seen++
		}
	}
	if seen != len(tests) {
		t.Errorf("%d error fixtures in testdata, %d tested", seen, len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := providertest.Read(t, tt.name)
			e := providers.DecodeError(400, body)
			if e.Message != tt.wantMessage || e.Type != tt.typ || e.Code != tt.code || e.StatusCode != 400 {
				t.Errorf("DecodeError = %+v, want type %q code %q message %q", e, tt.typ, tt.code, tt.wantMessage)
			}
			if e.Retryable() {
				t.Errorf("a 400 is not retryable")
			}
			_, err := New().ParseResponse(body)
			var apiErr *providers.APIError
			if !errors.As(err, &apiErr) || apiErr.Message != tt.wantMessage {
				t.Errorf("ParseResponse error = %v, want an APIError saying %q", err, tt.wantMessage)
			}
		})
	}
}
