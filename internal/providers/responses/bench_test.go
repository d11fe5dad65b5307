package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// longStream is a stream of n text deltas followed by a call whose
// arguments arrive in n deltas.
func longStream(n int) []byte {
	evs := []string{`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`}
	for range n {
		evs = append(evs, `{"type":"response.output_text.delta","output_index":0,"item_id":"msg_1","delta":"word "}`)
	}
	evs = append(evs, `{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"write","arguments":""}}`)
	for range n {
		evs = append(evs, `{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_1","delta":"ab"}`)
	}
	evs = append(evs, completed)
	return events(evs...)
}

func BenchmarkReadStream(b *testing.B) {
	bodies := map[string][]byte{
		"deepseek-reasoning-tool": providertest.Read(b, "pydantic-responses-api-function-tool-stream.sse"),
		"10k-deltas":              longStream(5000),
	}
	for name, body := range bodies {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := providers.ReadStream(bytes.NewReader(body), providers.SSE, New().NewStream(), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseToolCalls(b *testing.B) {
	for _, name := range []string{"llm-interleaved-reasoning-4.json", "fantasy-gpt4o-multi-tool-stream.sse"} {
		body := providertest.Read(b, name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			p := New()
			for b.Loop() {
				calls, err := p.ParseToolCalls(body)
				if err != nil || len(calls) == 0 {
					b.Fatal(calls, err)
				}
			}
		})
	}
}

// BenchmarkBuildRequest renders a long history, to catch quadratic
// request building.
func BenchmarkBuildRequest(b *testing.B) {
	p := New()
	for _, n := range []int{100, 2000} {
		var history []json.RawMessage
		for i := range n {
			history = append(history, json.RawMessage(fmt.Sprintf(
				`{"type":"function_call","call_id":"call_%d","name":"read","arguments":"{\"path\":\"%s\"}"}`, i, strings.Repeat("x", 1000))))
		}
		req := providers.Request{Model: "gpt-5", System: "sys", Messages: history, Tools: []providers.Tool{{Name: "read"}}}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.BuildRequest(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
