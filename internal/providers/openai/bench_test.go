package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// conversation is a history of n messages cycling through user text,
// assistant tool calls with reasoning, and tool results of about 1 KB.
func conversation(n int) []json.RawMessage {
	result := bytes.Repeat([]byte("line of tool output "), 50)
	msgs := make([]json.RawMessage, n)
	for i := range msgs {
		switch i % 3 {
		case 0:
			msgs[i] = json.RawMessage(fmt.Sprintf(`{"role":"user","content":"step %d: read the next file"}`, i))
		case 1:
			msgs[i] = json.RawMessage(fmt.Sprintf(`{"role":"assistant","reasoning_content":"I should read it.","tool_calls":[{"id":"call_%d","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"f%d.go\"}"}}]}`, i, i))
		default:
			msgs[i] = json.RawMessage(fmt.Sprintf(`{"role":"tool","tool_call_id":"call_%d","content":%q}`, i-1, result))
		}
	}
	return msgs
}

func benchmarkBuildRequest(b *testing.B, n int) {
	req := providers.Request{
		Model:    "gpt-4o",
		System:   "You are a careful assistant.",
		Messages: conversation(n),
		Tools:    []providers.Tool{{Name: "read_file", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}},
		Stream:   true,
	}
	p := New()
	body, err := p.BuildRequest(req)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.BuildRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildRequest1000(b *testing.B)  { benchmarkBuildRequest(b, 1000) }
func BenchmarkBuildRequest10000(b *testing.B) { benchmarkBuildRequest(b, 10000) }

// BenchmarkReadStream reads the biggest recorded stream.
func BenchmarkReadStream(b *testing.B) {
	name := biggestStream(b)
	body := providertest.Read(b, name)
	p := New()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := providers.ReadStream(bytes.NewReader(body), providers.SSE, p.NewStream(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

func biggestStream(b *testing.B) string {
	m, err := filepath.Glob(filepath.Join("testdata", "*", "*.sse"))
	if err != nil || len(m) == 0 {
		b.Fatalf("no streams: %v", err)
	}
	best, size := "", int64(-1)
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	rel, _ := filepath.Rel("testdata", best)
	b.Logf("stream: %s (%d bytes)", rel, size)
	return rel
}

func BenchmarkParseToolCalls(b *testing.B) {
	body := providertest.Read(b, "deepseek/pydantic-reasoner-tool-2.json")
	p := New()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		calls, err := p.ParseToolCalls(body)
		if err != nil || len(calls) != 2 {
			b.Fatalf("calls = %v, %v", calls, err)
		}
	}
}

// longStream is a synthetic stream of about 2 MB: reasoning and answer text
// in many small deltas, then a call whose arguments arrive in as many
// fragments, the shapes that dominate real traffic.
func longStream() []byte {
	var ev []string
	ev = append(ev, chunk(`{"role":"assistant","content":""}`, ""))
	for i := range 4000 {
		ev = append(ev, chunk(fmt.Sprintf(`{"reasoning_content":"step %d: weigh the options carefully "}`, i), ""))
	}
	for range 4000 {
		ev = append(ev, chunk(`{"content":"Some words of the answer, "}`, ""))
	}
	ev = append(ev, chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write_file","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a.txt\",\"content\":\""}}]}`, ""))
	for range 4000 {
		ev = append(ev, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"line of file content\\n"}}]}`, ""))
	}
	ev = append(ev, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}`, ""),
		chunk(`{}`, "tool_calls"), "[DONE]")
	return []byte(sse(ev...))
}

// BenchmarkReadLongStream reports stream throughput (MB/s) on a stream
// large enough that per-call set-up does not dominate.
func BenchmarkReadLongStream(b *testing.B) {
	body := longStream()
	p := New()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		turn, err := providers.ReadStream(bytes.NewReader(body), providers.SSE, p.NewStream(), nil)
		if err != nil || len(turn.Calls) != 1 {
			b.Fatalf("turn %v, err %v", turn, err)
		}
	}
}

// BenchmarkParseToolCallsStream reads the calls of a whole recorded stream.
func BenchmarkParseToolCallsStream(b *testing.B) {
	body := providertest.Read(b, "openai-chat/fantasy-gpt4o-multi-tool-stream.sse")
	p := New()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		calls, err := p.ParseToolCalls(body)
		if err != nil || len(calls) == 0 {
			b.Fatalf("calls = %v, %v", calls, err)
		}
	}
}
