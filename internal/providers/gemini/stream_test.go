package gemini

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// sse renders chunks as Gemini sends them: data lines, CRLF separators.
func sse(chunks ...string) []byte {
	var b bytes.Buffer
	for _, c := range chunks {
		b.WriteString("data: " + c + "\r\n\r\n")
	}
	return b.Bytes()
}

// chunk is one response chunk holding parts, with a finishReason when
// finish is not empty.
func chunk(finish string, parts ...string) string {
	c := `{"candidates":[{"content":{"role":"model","parts":[` + strings.Join(parts, ",") + `]},"index":0`
	if finish != "" {
		c += `,"finishReason":"` + finish + `"`
	}
	return c + `}],"responseId":"r1"}`
}

// TestStreamMergesParts: text chunks join into one part, thought text into
// its own, calls stay whole and in order, signed parts stay where and as
// they came, and empty unsigned text parts vanish.
func TestStreamMergesParts(t *testing.T) {
	body := sse(
		chunk("", `{"text":"Let me ","thought":true}`),
		chunk("", `{"text":"think.","thought":true}`),
		chunk("", `{"text":"Hello "}`, `{"text":""}`),
		chunk("", `{"text":"<world> & co"}`),
		chunk("", `{"functionCall":{"name":"add","args":{"a":1}},"thoughtSignature":"c2lnMQ=="}`),
		chunk("", `{"functionCall":{"name":"mul","args":{"b": 2}}}`),
		chunk("", `{"text":" after"}`),
		chunk("STOP", `{"text":"","thoughtSignature":"c2lnMg=="}`),
	)
	turn, shown, err := providertest.Stream(New(), body)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Hello <world> & co after"; turn.Text != want || shown != want {
		t.Errorf("text = %q, shown = %q, want %q", turn.Text, shown, want)
	}
	if turn.Reasoning != "Let me think." {
		t.Errorf("reasoning = %q", turn.Reasoning)
	}
	want := `{"role":"model","parts":[{"text":"Let me think.","thought":true},{"text":"Hello <world> & co"},` +
		`{"functionCall":{"name":"add","args":{"a":1}},"thoughtSignature":"c2lnMQ=="},{"functionCall":{"name":"mul","args":{"b": 2}}},` +
		`{"text":" after"},{"text":"","thoughtSignature":"c2lnMg=="}]}`
	if len(turn.Messages) != 1 || string(turn.Messages[0]) != want {
		t.Errorf("Messages = %s\nwant %s", turn.Messages, want)
	}
	if len(turn.Calls) != 2 || turn.Calls[0].Name != "add" || turn.Calls[0].Arguments != `{"a":1}` || turn.Calls[1].Arguments != `{"b": 2}` {
		t.Fatalf("calls = %+v", turn.Calls)
	}
	if !isGeneratedID(turn.Calls[0].ID) || turn.Calls[0].ID == turn.Calls[1].ID {
		t.Errorf("ids = %q, %q, want two distinct generated ids", turn.Calls[0].ID, turn.Calls[1].ID)
	}
	again, _, _ := providertest.Stream(New(), body)
	if again.Calls[0].ID != turn.Calls[0].ID {
		t.Errorf("generated id not stable: %q then %q", turn.Calls[0].ID, again.Calls[0].ID)
	}
}

// TestStreamSignedTextStaysItsOwnPart: a text chunk that carries a
// signature is not merged with the text before or after it, so the
// signature stays on the very part that brought it.
func TestStreamSignedTextStaysItsOwnPart(t *testing.T) {
	turn, _, err := providertest.Stream(New(), sse(
		chunk("", `{"text":"a"}`),
		chunk("", `{"text":"b","thoughtSignature":"U0lH"}`),
		chunk("STOP", `{"text":"c"}`),
	))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"model","parts":[{"text":"a"},{"text":"b","thoughtSignature":"U0lH"},{"text":"c"}]}`
	if string(turn.Messages[0]) != want || turn.Text != "abc" {
		t.Errorf("Messages = %s, text %q\nwant %s", turn.Messages[0], turn.Text, want)
	}
}

// TestStreamUsageAndFinish: usage is the last chunk's (cumulative), the
// finishReason the last given, and a chunk after it is still read.
func TestStreamUsageAndFinish(t *testing.T) {
	turn, _, err := providertest.Stream(New(), sse(
		`{"candidates":[{"content":{"parts":[{"text":"x"}]}}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":1,"totalTokenCount":11}}`,
		`{"candidates":[{"content":{"parts":[{"text":"y"}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":2,"totalTokenCount":12}}`,
		`{"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":2,"thoughtsTokenCount":3,"totalTokenCount":15}}`,
	))
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Usage{InputTokens: 10, OutputTokens: 5, ReasoningTokens: 3, TotalTokens: 15}
	if turn.Usage != want || turn.StopReason != "MAX_TOKENS" || turn.Text != "xy" {
		t.Errorf("usage %+v stop %q text %q, want %+v MAX_TOKENS xy", turn.Usage, turn.StopReason, turn.Text, want)
	}
}

// TestStreamFixtureSignatures pins where the recorded streams' signatures
// end up: on the first of two parallel calls, on a lone call with empty
// args, and on the empty text part that closes a final answer.
func TestStreamFixtureSignatures(t *testing.T) {
	tests := []struct {
		fixture string
		// signed[i] is whether part i of the echoed content carries the
		// signature; kinds[i] names the part.
		kinds  []string
		signed []bool
	}{
		{"fantasy-3pro-multi-tool-stream.sse", []string{"call add", "call multiply"}, []bool{true, false}},
		{"fantasy-25flash-tool-stream.sse", []string{"call weather"}, []bool{true}},
		{"pydantic-3pro-stream-thought-signature.sse", []string{"call get_country"}, []bool{true}},
		{"fantasy-3pro-multi-tool-stream-turn2.sse", []string{"text", "empty text"}, []bool{false, true}},
		{"llm-gemini-3flash-thought-signatures.stream-array.json", []string{"call multiply"}, []bool{true}},
	}
	for _, tt := range tests {
		t.Run(providertest.Stem(tt.fixture), func(t *testing.T) {
			body := providertest.Read(t, tt.fixture)
			turn, err := providers.ParseBody(New(), body)
			if err != nil {
				t.Fatal(err)
			}
			// The signatures as recorded, in order of arrival.
			var recorded []string
			if isArrayFixture(tt.fixture) {
				for _, c := range gjson.ParseBytes(body).Array() {
					recorded = append(recorded, signaturesIn(c)...)
				}
			} else {
				_ = providers.ReadSSE(bytes.NewReader(body), func(ev providers.Event) error {
					recorded = append(recorded, signaturesIn(gjson.ParseBytes(ev.Data))...)
					return nil
				})
			}
			parts := gjson.GetBytes(turn.Messages[0], "parts").Array()
			if len(parts) != len(tt.kinds) {
				t.Fatalf("echoed %d parts, want %d: %s", len(parts), len(tt.kinds), turn.Messages[0])
			}
			var echoed []string
			for i, p := range parts {
				kind := "text"
				if fc := p.Get("functionCall"); fc.Exists() {
					kind = "call " + fc.Get("name").String()
				} else if p.Get("text").String() == "" {
					kind = "empty text"
				}
				sig := p.Get("thoughtSignature")
				if kind != tt.kinds[i] || sig.Exists() != tt.signed[i] {
					t.Errorf("part %d is %s signed=%v, want %s signed=%v", i, kind, sig.Exists(), tt.kinds[i], tt.signed[i])
				}
				if sig.Exists() {
					echoed = append(echoed, sig.Raw)
				}
			}
			if strings.Join(echoed, "\n") != strings.Join(recorded, "\n") || len(recorded) == 0 {
				t.Errorf("echoed signatures differ from the recorded ones (JSON text)\n got %q\nwant %q", echoed, recorded)
			}
		})
	}
}

// signaturesIn returns the raw JSON text of every thoughtSignature in a
// chunk's parts.
func signaturesIn(c gjson.Result) []string {
	var out []string
	for _, p := range c.Get("candidates.0.content.parts").Array() {
		if s := p.Get("thoughtSignature"); s.Exists() {
			out = append(out, s.Raw)
		}
	}
	return out
}

func TestStreamErrors(t *testing.T) {
	tests := []struct {
		name    string
		body    []byte
		wantAPI string // status of an *APIError, or ""
		wantIs  error
	}{
		{"error object", sse(`{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`), "UNAVAILABLE", nil},
		{"error after content", sse(chunk("", `{"text":"Hel"}`), `{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}`), "INTERNAL", nil},
		{"prompt blocked", sse(`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":4}}`), "PROHIBITED_CONTENT", nil},
		{"cut before finishReason", sse(chunk("", `{"text":"Hel"}`), chunk("", `{"functionCall":{"name":"f","args":{}}}`)), "", providers.ErrStreamCut},
		{"empty body", nil, "", providers.ErrStreamCut},
		{"cut inside a chunk", []byte("data: {\"candidates\": [{\"content\": {\"par"), "", providers.ErrMalformed},
		{"not an object", sse(`"text"`), "", providers.ErrMalformed},
		{"parts not an array", sse(`{"candidates":[{"content":{"parts":{"text":"x"}},"finishReason":"STOP"}]}`), "", providers.ErrMalformed},
		{"call without name", sse(chunk("STOP", `{"functionCall":{"args":{}}}`)), "", providers.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn, _, err := providertest.Stream(New(), tt.body)
			if err == nil {
				t.Fatalf("no error; turn = %+v", turn)
			}
			if tt.wantAPI != "" {
				var apiErr *providers.APIError
				if !errors.As(err, &apiErr) || apiErr.Type != tt.wantAPI || apiErr.Message == "" {
					t.Errorf("error = %v, want an *APIError %s", err, tt.wantAPI)
				}
				return
			}
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("error = %v, want %v", err, tt.wantIs)
			}
		})
	}
}

// TestStreamAddReturnsAPIError: the error comes out of Add itself.
func TestStreamAddReturnsAPIError(t *testing.T) {
	s := New().NewStream()
	_, err := s.Add(providers.Event{Data: []byte(`{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`)})
	var apiErr *providers.APIError
	if !errors.As(err, &apiErr) || apiErr.Type != "RESOURCE_EXHAUSTED" || apiErr.StatusCode != 0 {
		t.Errorf("Add error = %v, want an in-stream *APIError", err)
	}
}

// TestStreamLFFraming: the same chunks framed with LF alone read the same.
func TestStreamLFFraming(t *testing.T) {
	crlf := providertest.Read(t, "fantasy-3pro-multi-tool-stream.sse")
	lf := bytes.ReplaceAll(crlf, []byte("\r\n"), []byte("\n"))
	a, _, err := providertest.Stream(New(), crlf)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := providertest.Stream(New(), lf)
	if err != nil {
		t.Fatal(err)
	}
	providertest.SameJSON(t, "LF vs CRLF", providertest.Marshal(t, providertest.RecordTurn(b)), providertest.Marshal(t, providertest.RecordTurn(a)))
}
