package gemini

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// longStream is a synthetic stream of about 2 MB: thought text, answer text
// in small chunks and a call with a large argument and a long signature,
// the shapes that dominate real traffic.
func longStream() []byte {
	var chunks []string
	for i := range 3000 {
		chunks = append(chunks, chunk("", `{"text":"step `+strconv.Itoa(i)+`: weigh the options carefully before acting\n","thought":true}`))
	}
	for range 3000 {
		chunks = append(chunks, chunk("", `{"text":"Some words of the answer, "}`))
	}
	content := strings.Repeat(`line of file content\n`, 20000)
	chunks = append(chunks, chunk("STOP", `{"functionCall":{"name":"write_file","args":{"path":"a.txt","content":"`+content+`"}},"thoughtSignature":"`+strings.Repeat("QUJD", 2000)+`"}`))
	return sse(chunks...)
}

// BenchmarkReadStream reports throughput (MB/s) of reading whole streams:
// the recorded ones and a long synthetic one.
func BenchmarkReadStream(b *testing.B) {
	bodies := map[string][]byte{"synthetic-2MB": longStream()}
	for _, name := range providertest.Fixtures(b, ".sse") {
		bodies[providertest.Stem(name)] = providertest.Read(b, name)
	}
	for name, body := range bodies {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				turn, err := providers.ReadStream(bytes.NewReader(body), providers.SSE, New().NewStream(), nil)
				if err != nil || len(turn.Messages) != 1 {
					b.Fatalf("turn %v, err %v", turn, err)
				}
			}
		})
	}
}

// BenchmarkParseToolCalls reads the calls of a plain reply, a stream array
// and a recorded SSE stream.
func BenchmarkParseToolCalls(b *testing.B) {
	for _, name := range []string{"pydantic-three-parallel-calls.json", "llm-gemini-3flash-thought-signatures.stream-array.json", "fantasy-3pro-multi-tool-stream.sse"} {
		body := providertest.Read(b, name)
		b.Run(providertest.Stem(name), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			p := New()
			for b.Loop() {
				calls, err := p.ParseToolCalls(body)
				if err != nil || len(calls) == 0 {
					b.Fatalf("calls %v, err %v", calls, err)
				}
			}
		})
	}
}

// BenchmarkBuildRequest renders a 2000-content history, to catch quadratic
// request building.
func BenchmarkBuildRequest(b *testing.B) {
	p := New()
	turn, err := p.ParseResponse(providertest.Read(b, "fantasy-3pro-multi-tool.json"))
	if err != nil {
		b.Fatal(err)
	}
	results, err := p.FormatToolResults([]providers.ToolResult{
		{ID: turn.Calls[0].ID, Name: "add", Content: strings.Repeat("x", 1000)},
		{ID: turn.Calls[1].ID, Name: "multiply", Content: `{"product":6}`},
	})
	if err != nil {
		b.Fatal(err)
	}
	var msgs []json.RawMessage
	for range 1000 {
		msgs = append(msgs, turn.Messages...)
		msgs = append(msgs, results...)
	}
	tools := []providers.Tool{{Name: "add", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`)}}
	req := providers.Request{Model: "m", System: "s", Messages: msgs, Tools: tools, Stream: true, MaxTokens: 4000}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.BuildRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}
