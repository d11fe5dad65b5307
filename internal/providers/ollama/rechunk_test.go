package ollama

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

// rechunk turns a whole /api/chat reply into the NDJSON stream the server
// could have sent for it: thinking and content cut at k into two lines
// each, every tool call whole on a line of its own, and the metrics on the
// final done:true line.
func rechunk(t testing.TB, whole []byte, k int) []byte {
	t.Helper()
	var b bytes.Buffer
	line := func(msg string, done bool) {
		l := `{"model":"m","message":{"role":"assistant","content":""},"done":false}`
		var err error
		if msg != "" {
			l, err = sjson.SetRaw(l, "message", msg)
		}
		if err == nil && done {
			l = string(whole)
			l, err = sjson.SetRaw(l, "message", `{"role":"assistant","content":""}`)
		}
		if err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, []byte(l)); err != nil {
			t.Fatal(err)
		}
		b.Write(c.Bytes())
		b.WriteByte('\n')
	}
	msg := gjson.GetBytes(whole, "message")
	for _, key := range []string{"thinking", "content"} {
		s := msg.Get(key).String()
		n := providertest.RuneCut(s, k)
		for _, piece := range []string{s[:n], s[n:]} {
			m, _ := sjson.Set(`{"role":"assistant","content":""}`, key, piece)
			line(m, false)
		}
	}
	for _, c := range msg.Get("tool_calls").Array() {
		m, _ := sjson.SetRaw(`{"role":"assistant","content":""}`, "tool_calls", "["+c.Raw+"]")
		line(m, false)
	}
	line("", true)
	return b.Bytes()
}

// TestRechunkedStreamEchoesWholeReply cuts whole replies into streams at
// every point of their thinking and content and checks that each stream
// echoes the message the whole reply does and gives the same calls.
func TestRechunkedStreamEchoesWholeReply(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"fantasy-pr63-gptoss120b-tool.json", "fantasy-pr63-gptoss120b-multi-tool.json", "fantasy-pr63-gptoss120b-tool-turn2.json", "fantasy-pr63-gptoss120b-multi-tool-2.json"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := providertest.Read(t, name)
			whole, err := providers.ParseBody(New(), body)
			if err != nil {
				t.Fatal(err)
			}
			msg := gjson.GetBytes(body, "message")
			longest := max(len(msg.Get("thinking").String()), len(msg.Get("content").String()))
			for k := 0; k <= longest; k++ {
				turn, err := providers.ParseBody(New(), rechunk(t, body, k))
				if err != nil {
					t.Fatalf("cut at %d: %v", k, err)
				}
				providertest.SameJSON(t, "echo cut at "+strconv.Itoa(k), turn.Messages[0], whole.Messages[0])
				if len(turn.Calls) != len(whole.Calls) || turn.Text != whole.Text || turn.Reasoning != whole.Reasoning {
					t.Fatalf("cut at %d: %+v, want %+v", k, turn, whole)
				}
				for i, c := range turn.Calls {
					w := whole.Calls[i]
					if c.ID != w.ID || c.Name != w.Name || providertest.Compact(t, c.Arguments) != providertest.Compact(t, w.Arguments) {
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
