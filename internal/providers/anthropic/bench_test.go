package anthropic

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// longStream is a synthetic stream of about 2 MB: a long thinking block, text
// deltas and a large tool input, the shapes that dominate real traffic.
func longStream() []byte {
	var ev []string
	ev = append(ev, evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
	for i := range 4000 {
		ev = append(ev, `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"step `+strconv.Itoa(i)+`: weigh the options carefully before acting\n"}}`)
	}
	ev = append(ev, `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"`+strings.Repeat("QUJD", 500)+`"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
	for range 4000 {
		ev = append(ev, `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Some words of the answer, "}}          `)
	}
	ev = append(ev, `{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"write_file","input":{}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a.txt\", \"content\": \""}}`)
	for range 4000 {
		ev = append(ev, `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"line of file content\\n"}}`)
	}
	ev = append(ev, `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"}"}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9000}}`, evStop)
	return sse(ev...)
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

// BenchmarkParseToolCalls reads the calls of a non-streamed reply and of a
// recorded stream.
func BenchmarkParseToolCalls(b *testing.B) {
	for _, name := range []string{"pydantic-parallel-4-tools.json", "fantasy-sonnet4-multi-tool-stream.sse"} {
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

// BenchmarkBuildRequest renders a 2000-message history, to catch quadratic
// request building.
func BenchmarkBuildRequest(b *testing.B) {
	p := New()
	turn, err := p.ParseResponse(providertest.Read(b, "pydantic-tool-with-thinking.json"))
	if err != nil {
		b.Fatal(err)
	}
	results, err := p.FormatToolResults([]providers.ToolResult{{ID: "toolu_01YGzqpRE16Vricda3Aqcejo", Content: strings.Repeat("x", 1000)}})
	if err != nil {
		b.Fatal(err)
	}
	var msgs []json.RawMessage
	for range 1000 {
		msgs = append(msgs, turn.Messages...)
		msgs = append(msgs, results...)
	}
	req := providers.Request{Model: "m", System: "s", Messages: msgs, Tools: []providers.Tool{{Name: "get_user_country"}}, Stream: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.BuildRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}
