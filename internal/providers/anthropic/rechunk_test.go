package anthropic

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// rechunk turns a whole Messages response into the stream the API would
// have sent for it, every streamed member cut at k: each block starts
// empty (a thinking block with "signature":"", a tool_use with input {})
// and its text, thinking, signature and input arrive in two deltas each.
func rechunk(t testing.TB, whole []byte, k int) []byte {
	t.Helper()
	var b bytes.Buffer
	event := func(name string, data any) {
		raw, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("event: " + name + "\ndata: ")
		b.Write(raw)
		b.WriteString("\n\n")
	}
	cut := func(s string) []string {
		n := providertest.RuneCut(s, k)
		return []string{s[:n], s[n:]}
	}
	doc := gjson.ParseBytes(whole)
	msg, err := sjson.SetRaw(doc.Raw, "content", "[]")
	if err != nil {
		t.Fatal(err)
	}
	event("message_start", map[string]any{"type": "message_start", "message": json.RawMessage(msg)})
	for i, block := range doc.Get("content").Array() {
		start := block.Raw
		deltas := []map[string]any{}
		add := func(typ, key string, parts []string) {
			for _, p := range parts {
				deltas = append(deltas, map[string]any{"type": typ, key: p})
			}
		}
		switch block.Get("type").String() {
		case "text":
			start, _ = sjson.Set(start, "text", "")
			add("text_delta", "text", cut(block.Get("text").String()))
		case "thinking":
			start, _ = sjson.Set(start, "thinking", "")
			start, _ = sjson.Set(start, "signature", "")
			add("thinking_delta", "thinking", cut(block.Get("thinking").String()))
			add("signature_delta", "signature", cut(block.Get("signature").String()))
		case "tool_use":
			start, _ = sjson.SetRaw(start, "input", "{}")
			var input bytes.Buffer
			if err := json.Compact(&input, []byte(block.Get("input").Raw)); err != nil {
				t.Fatal(err)
			}
			add("input_json_delta", "partial_json", cut(input.String()))
		}
		event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": json.RawMessage(start)})
		for _, d := range deltas {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": doc.Get("stop_reason").String()}, "usage": json.RawMessage(doc.Get("usage").Raw)})
	event("message_stop", map[string]any{"type": "message_stop"})
	return b.Bytes()
}

// TestRechunkedStreamEchoesWholeReply cuts whole replies (thinking with its
// signature, text, tool calls) into streams at every point and checks that
// each stream echoes the message the whole reply does, and gives the same
// calls.
func TestRechunkedStreamEchoesWholeReply(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"pydantic-tool-with-thinking.json", "fantasy-sonnet4-multi-tool.json", "pydantic-parallel-4-tools.json", "sdkgo-tool-call.json"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := providertest.Read(t, name)
			whole, err := providers.ParseBody(New(), body)
			if err != nil {
				t.Fatal(err)
			}
			longest := 0
			for _, block := range gjson.GetBytes(body, "content").Array() {
				for _, key := range []string{"text", "thinking", "signature", "input"} {
					longest = max(longest, len(block.Get(key).Raw))
				}
			}
			for k := 0; k <= longest; k++ {
				turn, err := providers.ParseBody(New(), rechunk(t, body, k))
				if err != nil {
					t.Fatalf("cut at %d: %v", k, err)
				}
				providertest.SameJSON(t, "echo cut at "+strconv.Itoa(k), turn.Messages[0], whole.Messages[0])
				if len(turn.Calls) != len(whole.Calls) {
					t.Fatalf("cut at %d: %d calls, want %d", k, len(turn.Calls), len(whole.Calls))
				}
				for i, c := range turn.Calls {
					if c.Name != whole.Calls[i].Name || c.ID != whole.Calls[i].ID || !strings.EqualFold(providertest.Compact(t, c.Arguments), providertest.Compact(t, whole.Calls[i].Arguments)) {
						t.Errorf("cut at %d: call %d = %+v, want %+v", k, i, c, whole.Calls[i])
					}
				}
				if t.Failed() {
					return
				}
			}
		})
	}
}
