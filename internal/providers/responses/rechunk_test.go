package responses

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

// rechunk turns a whole response into the event stream the API could have
// sent for it, every argument and text cut at k: output_item.added with the
// item as it starts (empty arguments, no content, no encrypted content),
// the deltas, and, when withDone, output_item.done with the whole item and
// a response.completed repeating the output. Without them, the items must
// be rebuilt from the deltas alone.
func rechunk(t testing.TB, whole []byte, k int, withDone bool) []byte {
	t.Helper()
	var b bytes.Buffer
	event := func(doc string) {
		var c bytes.Buffer
		if err := json.Compact(&c, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		b.WriteString("event: " + gjson.Get(doc, "type").String() + "\ndata: ")
		b.Write(c.Bytes())
		b.WriteString("\n\n")
	}
	set := func(doc, path string, v any) string {
		out, err := sjson.Set(doc, path, v)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	setRaw := func(doc, path, raw string) string {
		out, err := sjson.SetRaw(doc, path, raw)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	cut := func(s string) []string {
		n := providertest.RuneCut(s, k)
		return []string{s[:n], s[n:]}
	}
	for i, item := range gjson.GetBytes(whole, "output").Array() {
		start := item.Raw
		var deltas []string
		delta := func(typ, text string) {
			for _, piece := range cut(text) {
				d := set(`{}`, "type", typ)
				d = set(d, "item_id", item.Get("id").String())
				d = set(d, "output_index", i)
				deltas = append(deltas, set(d, "delta", piece))
			}
		}
		switch item.Get("type").String() {
		case "function_call":
			start = set(start, "arguments", "")
			delta("response.function_call_arguments.delta", item.Get("arguments").String())
		case "message":
			start = setRaw(start, "content", "[]")
			delta("response.output_text.delta", item.Get("content.0.text").String())
		case "reasoning":
			start, _ = sjson.Delete(start, "encrypted_content")
		}
		added := setRaw(set(`{"type":"response.output_item.added"}`, "output_index", i), "item", start)
		event(added)
		for _, d := range deltas {
			event(d)
		}
		if withDone {
			event(setRaw(set(`{"type":"response.output_item.done"}`, "output_index", i), "item", item.Raw))
		}
	}
	resp := string(whole)
	if !withDone {
		resp = setRaw(resp, "output", "[]")
	}
	event(setRaw(`{"type":"response.completed"}`, "response", resp))
	return b.Bytes()
}

// TestRechunkedStreamEchoesWholeReply cuts whole replies into streams at
// every point and checks that each stream echoes the items the whole reply
// does (reasoning with its encrypted content, which only the done event
// carries) and, rebuilt from the deltas alone, gives the same calls.
func TestRechunkedStreamEchoesWholeReply(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"llm-encrypted-reasoning-1.json", "llm-interleaved-reasoning-4.json", "fantasy-gpt5-multi-tool.json", "fantasy-gpt4o-tool.json", "llm-tool-use-turn2.json", "pydantic-previous-response-id-turn2.json"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := providertest.Read(t, name)
			whole, err := providers.ParseBody(New(), body)
			if err != nil {
				t.Fatal(err)
			}
			longest := 0
			for _, item := range gjson.GetBytes(body, "output").Array() {
				longest = max(longest, len(item.Get("arguments").String()), len(item.Get("content.0.text").String()))
			}
			for k := 0; k <= longest; k++ {
				turn, err := providers.ParseBody(New(), rechunk(t, body, k, true))
				if err != nil {
					t.Fatalf("cut at %d: %v", k, err)
				}
				providertest.SameJSON(t, "echo cut at "+strconv.Itoa(k), providers.JoinArray(turn.Messages), providers.JoinArray(whole.Messages))

				rebuilt, err := providers.ParseBody(New(), rechunk(t, body, k, false))
				if err != nil {
					t.Fatalf("cut at %d, no done events: %v", k, err)
				}
				if len(rebuilt.Calls) != len(whole.Calls) || rebuilt.Text != whole.Text {
					t.Fatalf("cut at %d, no done events: %d calls and text %q, want %d and %q", k, len(rebuilt.Calls), rebuilt.Text, len(whole.Calls), whole.Text)
				}
				for i, c := range rebuilt.Calls {
					if c != whole.Calls[i] {
						t.Errorf("cut at %d, no done events: call %d = %+v, want %+v", k, i, c, whole.Calls[i])
					}
				}
				if t.Failed() {
					return
				}
			}
		})
	}
}
