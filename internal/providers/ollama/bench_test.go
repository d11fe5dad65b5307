package ollama

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// BenchmarkReadStream reads the longest recorded stream (84 lines of
// thinking fragments and one call) through the NDJSON framing; the MB/s
// column is stream throughput.
func BenchmarkReadStream(b *testing.B) {
	body := providertest.Read(b, "fantasy-pr63-gptoss120b-multi-tool-stream.ndjson")
	p := New()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		turn, err := providers.ReadStream(bytes.NewReader(body), p.Framing(), p.NewStream(), nil)
		if err != nil || len(turn.Calls) != 1 {
			b.Fatalf("calls %v, err %v", turn, err)
		}
	}
}

func BenchmarkParseToolCalls(b *testing.B) {
	for _, name := range []string{
		"fantasy-pr63-gptoss120b-tool.json",
		"fantasy-pr63-gptoss120b-tool-stream.ndjson",
	} {
		b.Run(strings.TrimPrefix(name, "fantasy-pr63-"), func(b *testing.B) {
			body := providertest.Read(b, name)
			p := New()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				calls, err := p.ParseToolCalls(body)
				if err != nil || len(calls) != 1 {
					b.Fatalf("calls %v, err %v", calls, err)
				}
			}
		})
	}
}

// BenchmarkBuildRequestLongHistory renders a 2000-message history; building
// stays linear (one join, no per-message appends).
func BenchmarkBuildRequestLongHistory(b *testing.B) {
	msg := json.RawMessage(`{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}`)
	req := providers.Request{Model: "m", System: "s", Stream: true}
	for range 2000 {
		req.Messages = append(req.Messages, msg)
	}
	p := New()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.BuildRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}
