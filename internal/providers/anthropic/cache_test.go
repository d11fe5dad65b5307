package anthropic

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// marks lists where a request body carries cache_control, as
// "tools.N", "system.N" and "messages.N.content.M".
func marks(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	doc := gjson.ParseBytes(body)
	for _, field := range []string{"tools", "system"} {
		doc.Get(field).ForEach(func(k, v gjson.Result) bool {
			if v.Get("cache_control").Exists() {
				out = append(out, field+"."+k.String())
			}
			return true
		})
	}
	doc.Get("messages").ForEach(func(i, m gjson.Result) bool {
		m.Get("content").ForEach(func(j, b gjson.Result) bool {
			if b.Get("cache_control").Exists() {
				if got := b.Get("cache_control").Raw; got != `{"type":"ephemeral"}` {
					t.Errorf("mark %s", got)
				}
				out = append(out, "messages."+i.String()+".content."+j.String())
			}
			return true
		})
		return true
	})
	return out
}

// cachedFollowUp rebuilds a recorded follow-up (roundtrip_test.go) with a
// system prompt and caching on.
func cachedFollowUp(t *testing.T, name string, extra ...json.RawMessage) []byte {
	t.Helper()
	for _, f := range followUps {
		if f.name != name {
			continue
		}
		rb := rebuildFollowUp(t, providertest.Read(t, f.prevRequest), providertest.Read(t, f.prevReply), providertest.Read(t, f.nextRequest))
		doc := gjson.ParseBytes(rb.body)
		var msgs []json.RawMessage
		for _, m := range doc.Get("messages").Array() {
			msgs = append(msgs, json.RawMessage(m.Raw))
		}
		req := providers.Request{Model: doc.Get("model").String(), System: "You are ask.", Messages: append(msgs, extra...),
			Tools: toolsOf(doc), Cache: providers.Cache{Mark: true}}
		before := providertest.Marshal(t, req.Messages)
		body, err := New().BuildRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		if after := providertest.Marshal(t, req.Messages); string(after) != string(before) {
			t.Fatal("marking changed the conversation itself, which is echoed unmarked")
		}
		return body
	}
	t.Fatalf("no follow-up %s", name)
	return nil
}

func toolsOf(doc gjson.Result) []providers.Tool {
	var tools []providers.Tool
	for _, tl := range doc.Get("tools").Array() {
		tools = append(tools, providers.Tool{Name: tl.Get("name").String(), Description: tl.Get("description").String(),
			Parameters: json.RawMessage(tl.Get("input_schema").Raw)})
	}
	return tools
}

// TestCacheMarks pins where requests put their breakpoints: the last
// message, the previous request's last message, the system prompt and the
// last tool, never more than four counting those the conversation brought.
func TestCacheMarks(t *testing.T) {
	t.Parallel()
	p := New()
	prompt, _ := p.UserMessage("What is the weather in Paris?")
	tools := []providers.Tool{{Name: "weather", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "time"}}

	t.Run("first step", func(t *testing.T) {
		body, err := p.BuildRequest(providers.Request{Model: "claude-sonnet-4-5", System: "You are ask.", Messages: []json.RawMessage{prompt},
			Tools: tools, Cache: providers.Cache{Mark: true}})
		if err != nil {
			t.Fatal(err)
		}
		providertest.Golden(t, "requests/cache-first-step", body)
		want := []string{"tools.1", "system.0", "messages.0.content.0"}
		if got := marks(t, body); !slices.Equal(got, want) {
			t.Errorf("marks %v, want %v", got, want)
		}
	})
	t.Run("second step", func(t *testing.T) {
		body := cachedFollowUp(t, "fantasy-sonnet4-multi-tool")
		providertest.Golden(t, "requests/cache-second-step", body)
		// messages: the prompt, the reply with two tool_use blocks, the
		// user message with both results (its second block is the last).
		want := []string{"tools.1", "system.0", "messages.0.content.0", "messages.2.content.1"}
		if got := marks(t, body); !slices.Equal(got, want) {
			t.Errorf("marks %v, want %v", got, want)
		}
	})
	t.Run("thinking is never marked", func(t *testing.T) {
		// The recorded reply starts with a thinking block; a last user
		// message ending in an empty text block is marked on the block
		// before it.
		last := json.RawMessage(`{"role":"user","content":[{"type":"text","text":"go on"},{"type":"text","text":""}]}`)
		thinking := json.RawMessage(`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"c2ln"}]}`)
		body := cachedFollowUp(t, "llm-anthropic-thinking-tool-stream", thinking, last)
		got := marks(t, body)
		if !slices.Contains(got, "messages.4.content.0") || slices.Contains(got, "messages.4.content.1") {
			t.Errorf("marks %v: want the last non-empty text block of message 4", got)
		}
		doc := gjson.ParseBytes(body)
		doc.Get("messages").ForEach(func(_, m gjson.Result) bool {
			m.Get("content").ForEach(func(_, b gjson.Result) bool {
				if strings.Contains(b.Get("type").String(), "thinking") && b.Get("cache_control").Exists() {
					t.Errorf("a %s block is marked", b.Get("type"))
				}
				return true
			})
			return true
		})
	})
	t.Run("marks the conversation brought count", func(t *testing.T) {
		marked := func(text string) json.RawMessage {
			return json.RawMessage(`{"role":"user","content":[{"type":"text","text":"` + text + `","cache_control":{"type":"ephemeral"}}]}`)
		}
		reply := json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"ok"}]}`)
		for brought := 0; brought <= 5; brought++ {
			var msgs []json.RawMessage
			for i := range brought {
				msgs = append(msgs, marked("earlier "+string(rune('a'+i))), reply)
			}
			msgs = append(msgs, prompt)
			body, err := p.BuildRequest(providers.Request{Model: "m", System: "s", Messages: msgs, Tools: tools, Cache: providers.Cache{Mark: true}})
			if err != nil {
				t.Fatal(err)
			}
			got := marks(t, body)
			// Alone, the prompt takes one mark beside the system
			// prompt's and the tools'; after an earlier message, the
			// marks fill up to four, and none is added past that.
			want := max(brought, 4)
			if brought == 0 {
				want = 3
			}
			if len(got) != want {
				t.Errorf("%d marks brought: %d in the request %v, want %d", brought, len(got), got, want)
			}
			if brought < 4 && !slices.Contains(got, "messages."+strconv.Itoa(len(msgs)-1)+".content.0") {
				t.Errorf("%d marks brought: the last message is not marked: %v", brought, got)
			}
		}
	})
	t.Run("off", func(t *testing.T) {
		f := followUps[1]
		rb := rebuildFollowUp(t, providertest.Read(t, f.prevRequest), providertest.Read(t, f.prevReply), providertest.Read(t, f.nextRequest))
		if got := marks(t, rb.body); len(got) != 0 {
			t.Errorf("a request without Cache carries marks %v", got)
		}
	})
}

// FuzzCacheMarks builds marked requests from any conversation (as `ask
// provider request` reads one from stdin): the body is valid JSON, never
// holds more than four marks unless the conversation brought more, and
// each message says what it said, in the same order, marks and the
// string-or-blocks form aside.
func FuzzCacheMarks(f *testing.F) {
	for _, fu := range followUps {
		var msgs []json.RawMessage
		for _, m := range gjson.GetBytes(providertest.Read(f, fu.nextRequest), "messages").Array() {
			msgs = append(msgs, json.RawMessage(m.Raw))
		}
		f.Add(string(providertest.Marshal(f, msgs)))
	}
	f.Add(`[{"role":"user","content":""},{"role":"assistant","content":[]},{"role":"user","content":[{"type":"text","text":"","cache_control":{"type":"ephemeral"}}]}]`)
	f.Add(`[{"role":"user","content":[{"type":"image","cache_control":1},{"type":"text","text":"a","cache_control":{}}]},{"role":"assistant"},{"content":"x"}]`)
	f.Fuzz(func(t *testing.T, conversation string) {
		var msgs []json.RawMessage
		if json.Unmarshal([]byte(conversation), &msgs) != nil {
			return
		}
		body, err := New().BuildRequest(providers.Request{Model: "m", System: "s", Messages: msgs,
			Tools: []providers.Tool{{Name: "t"}}, Cache: providers.Cache{Mark: true}})
		if err != nil {
			return // a message that is not valid JSON
		}
		if !json.Valid(body) {
			t.Fatalf("body is not valid JSON: %s", body)
		}
		brought := providers.CountCacheMarks(msgs)
		got := gjson.GetBytes(body, "messages").Array()
		if n := providers.CountCacheMarks(rawOf(got)) + strings.Count(gjson.GetBytes(body, "system").Raw+gjson.GetBytes(body, "tools").Raw, `"cache_control"`); n > max(brought, providers.MaxCacheMarks) {
			t.Fatalf("%d marks, %d brought: %s", n, brought, body)
		}
		if len(got) != len(msgs) {
			t.Fatalf("%d messages sent for %d", len(got), len(msgs))
		}
		for i, m := range got {
			if text(m) != text(gjson.ParseBytes(msgs[i])) {
				t.Fatalf("message %d says %q, was %q", i, text(m), text(gjson.ParseBytes(msgs[i])))
			}
		}
	})
}

func rawOf(rs []gjson.Result) []json.RawMessage {
	out := make([]json.RawMessage, len(rs))
	for i, r := range rs {
		out[i] = json.RawMessage(r.Raw)
	}
	return out
}

// text is what a message says: its role and its content's text, whether
// the content is a string or blocks.
func text(m gjson.Result) string {
	return m.Get("role").String() + ":" + textOf(m.Get("content"))
}
