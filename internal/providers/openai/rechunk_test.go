package openai

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

// rechunk turns the message of a whole reply into the stream a server could
// have sent for it, cut at k: every string is split at k (or its end), and
// members that do not stream in pieces (signatures, ids, formats, extras)
// come first as "" and then whole, as OpenRouter sends a Claude signature.
func rechunk(t testing.TB, msg gjson.Result, k int) string {
	t.Helper()
	first, second := `{"role":"assistant"}`, `{}`
	set := func(doc *string, path string, v any) {
		var err error
		if *doc, err = sjson.Set(*doc, path, v); err != nil {
			t.Fatal(err)
		}
	}
	setRaw := func(doc *string, path, raw string) {
		var err error
		if *doc, err = sjson.SetRaw(*doc, path, raw); err != nil {
			t.Fatal(err)
		}
	}
	split := func(s string) (string, string) {
		n := providertest.RuneCut(s, k)
		return s[:n], s[n:]
	}
	msg.ForEach(func(key, v gjson.Result) bool {
		name := key.String()
		switch {
		case name == "role" || v.Type == gjson.Null:
		case name == "content" || name == "reasoning" || name == "reasoning_content":
			a, b := split(v.String())
			set(&first, name, a)
			set(&second, name, b)
		case name == "reasoning_details":
			v.ForEach(func(i, d gjson.Result) bool {
				p := "reasoning_details." + i.String()
				for _, doc := range []*string{&first, &second} {
					set(doc, p+".type", d.Get("type").String())
					set(doc, p+".index", d.Get("index").Int())
				}
				d.ForEach(func(m, x gjson.Result) bool {
					mp := p + "." + m.String()
					switch {
					case m.String() == "type" || m.String() == "index":
					case concatenated[m.String()] && x.Type == gjson.String:
						a, b := split(x.String())
						set(&first, mp, a)
						set(&second, mp, b)
					case x.Type == gjson.String:
						set(&first, mp, "")
						setRaw(&second, mp, x.Raw)
					default:
						setRaw(&second, mp, x.Raw)
					}
					return true
				})
				return true
			})
		case name == "tool_calls":
			v.ForEach(func(i, c gjson.Result) bool {
				p := "tool_calls." + i.String()
				set(&first, p+".index", i.Int())
				set(&second, p+".index", i.Int())
				set(&first, p+".id", c.Get("id").String())
				set(&first, p+".type", c.Get("type").String())
				n1, n2 := split(c.Get("function.name").String())
				a1, a2 := split(c.Get("function.arguments").String())
				set(&first, p+".function.name", n1)
				set(&second, p+".function.name", n2)
				set(&first, p+".function.arguments", a1)
				set(&second, p+".function.arguments", a2)
				return true
			})
		case v.Type == gjson.String:
			set(&first, name, "")
			setRaw(&second, name, v.Raw)
		default:
			setRaw(&second, name, v.Raw)
		}
		return true
	})
	compact := func(doc string) string {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	return sse(chunk(compact(first), ""), chunk(compact(second), ""), chunk(`{}`, "tool_calls"), "[DONE]")
}

// TestRechunkedStreamEchoesWholeReply cuts whole replies into streams at
// every point and checks that the streamed echo is the whole reply's: a
// value a later fragment completes (OpenRouter's Claude signature, sent
// first as "") must win over the empty early one.
func TestRechunkedStreamEchoesWholeReply(t *testing.T) {
	t.Parallel()
	kimi := providertest.Read(t, "openrouter/fantasy-kimi-multi-tool.json")
	// OpenRouter's Claude reasoning: the Kimi reply's reasoning entry, with
	// the signature and format an Anthropic model's entry carries.
	claude, err := sjson.SetBytes(kimi, "choices.0.message.reasoning_details.0.signature", "EqQBCkgIARABGAIiQL0yq2Fc")
	if err != nil {
		t.Fatal(err)
	}
	if claude, err = sjson.SetBytes(claude, "choices.0.message.reasoning_details.0.format", "anthropic-claude-v1"); err != nil {
		t.Fatal(err)
	}
	// Gemini's OpenAI-compatible reply, with an id for its call (it sent
	// "", and generated ids of a whole reply and a stream differ).
	gemini, err := sjson.SetBytes(providertest.Read(t, "openai-chat/pydantic-compatible-tool-calls-without-id.json"), "choices.0.message.tool_calls.0.id", "call_0")
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{"openrouter claude signature": claude, "gemini thought_signature": gemini}
	for _, name := range []string{
		"openrouter/fantasy-gemini-tool.json",
		"openrouter/fantasy-kimi-multi-tool.json",
		"openrouter/fantasy-anthropic-multi-tool.json",
		"openai-chat/fantasy-gpt4o-multi-tool.json",
		"moonshot-kimi/fantasy-hf-kimi-k2-multi-tool.json",
		"local-openai-compat/fantasy-llamacpp-gptoss-tool.json",
	} {
		bodies[name] = providertest.Read(t, name)
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			whole, err := providers.ParseBody(New(), body)
			if err != nil {
				t.Fatal(err)
			}
			msg := gjson.GetBytes(body, "choices.0.message")
			longest := 0
			var walk func(gjson.Result)
			walk = func(r gjson.Result) {
				if r.Type == gjson.String {
					longest = max(longest, len(r.Str))
				}
				if !r.IsObject() && !r.IsArray() {
					return
				}
				r.ForEach(func(_, v gjson.Result) bool { walk(v); return true })
			}
			walk(msg)
			if !msg.IsObject() {
				t.Fatal("no choices.0.message")
			}
			for k := 0; k <= longest; k++ {
				turn, err := providers.ParseBody(New(), []byte(rechunk(t, msg, k)))
				if err != nil {
					t.Fatalf("cut at %d: %v", k, err)
				}
				providertest.SameJSON(t, "echo cut at "+strconv.Itoa(k), turn.Messages[0], whole.Messages[0])
				if t.Failed() {
					return
				}
			}
		})
	}
}
