package gemini

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// rechunk turns a whole generateContent response into the alt=sse stream
// the API could have sent for it: one part a chunk, plain text cut at k
// into two chunks, signed parts and calls whole (as the API sends them),
// the finishReason and usage on the last chunk.
func rechunk(t testing.TB, whole []byte, k int) []byte {
	t.Helper()
	var b bytes.Buffer
	chunk := func(part string, last bool) {
		c := `{"candidates":[{"content":{"role":"model","parts":[]},"index":0}]}`
		var err error
		if part != "" {
			c, err = sjson.SetRaw(c, "candidates.0.content.parts.-1", part)
		}
		if err == nil && last {
			c, err = sjson.Set(c, "candidates.0.finishReason", gjson.GetBytes(whole, "candidates.0.finishReason").String())
			if err == nil {
				c, err = sjson.SetRaw(c, "usageMetadata", gjson.GetBytes(whole, "usageMetadata").Raw)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(c)); err != nil {
			t.Fatal(err)
		}
		b.WriteString("data: ")
		b.Write(compact.Bytes())
		b.WriteString("\r\n\r\n")
	}
	for _, p := range gjson.GetBytes(whole, "candidates.0.content.parts").Array() {
		if text, _, plain := plainText(p); plain {
			n := providertest.RuneCut(text, k)
			head, _ := sjson.Set(p.Raw, "text", text[:n])
			tail, _ := sjson.Set(p.Raw, "text", text[n:])
			chunk(head, false)
			chunk(tail, false)
			continue
		}
		chunk(p.Raw, false)
	}
	chunk("", true)
	return b.Bytes()
}

// TestRechunkedStreamEchoesWholeReply cuts whole replies into streams at
// every point of their text and checks that each stream echoes the content
// the whole reply does (each thoughtSignature on the part it came with)
// and gives the same calls.
func TestRechunkedStreamEchoesWholeReply(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"fantasy-3pro-multi-tool.json", "fantasy-25pro-multi-tool.json", "fantasy-25flash-tool.json", "pydantic-three-parallel-calls.json", "fantasy-3pro-multi-tool-turn2.json", "fantasy-25flash-tool-turn2.json"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := providertest.Read(t, name)
			whole, err := providers.ParseBody(New(), body)
			if err != nil {
				t.Fatal(err)
			}
			longest := 0
			for _, p := range gjson.GetBytes(body, "candidates.0.content.parts").Array() {
				longest = max(longest, len(p.Get("text").String()))
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
				if turn.Text != whole.Text {
					t.Errorf("cut at %d: text %q, want %q", k, turn.Text, whole.Text)
				}
				if t.Failed() {
					return
				}
			}
		})
	}
}
