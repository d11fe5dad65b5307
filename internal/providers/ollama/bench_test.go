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

// BenchmarkReadLongStream reports stream throughput (MB/s) on a synthetic
// stream of about 1.5 MB (thinking and answer text in small pieces, then a
// call), large enough that per-call set-up does not dominate.
func BenchmarkReadLongStream(b *testing.B) {
	var lines []string
	for range 4000 {
		lines = append(lines, `{"model":"qwen3","created_at":"2026-01-05T11:28:13.076204667Z","message":{"role":"assistant","content":"","thinking":"weigh the options "},"done":false}`)
	}
	for range 4000 {
		lines = append(lines, `{"model":"qwen3","created_at":"2026-01-05T11:28:13.076204667Z","message":{"role":"assistant","content":"Some words of the answer, "},"done":false}`)
	}
	lines = append(lines,
		`{"model":"qwen3","created_at":"2026-01-05T11:28:13.9Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"go.mod"}}}]},"done":false}`,
		`{"model":"qwen3","created_at":"2026-01-05T11:28:13.95Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":197,"eval_count":8000}`)
	body := ndjson(lines...)
	p := New()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		turn, err := providers.ReadStream(bytes.NewReader(body), p.Framing(), p.NewStream(), nil)
		if err != nil || len(turn.Calls) != 1 {
			b.Fatalf("turn %v, err %v", turn, err)
		}
	}
}
