package openai

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
	"github.com/tidwall/gjson"
)

// followUp is a recorded request that continues an earlier exchange.
type followUp struct {
	request  string // the recorded follow-up request
	earlier  string // the request before it
	response string // the response to the earlier request

	// clientAdded is how many messages the recording client appended
	// after the tool results on its own (not from the model, not results).
	clientAdded int
	// llmQuirks: simonw/llm inserts an empty assistant message before the
	// assistant tool_calls message and re-serializes the arguments with
	// spaces. Neither is something the protocol asks for; the comparison
	// removes that message and compares arguments as JSON values.
	llmQuirks bool
	// plainReasoning: ask echoes OpenRouter's plain "reasoning" string next
	// to reasoning_details; charmbracelet/fantasy sends only the latter.
	// The comparison drops it from ask's side; reasoning_details is
	// asserted byte for byte.
	plainReasoning bool
}

var followUpCases = []followUp{
	{request: "openai-chat/fantasy-gpt4o-tool-turn2.request.json", earlier: "openai-chat/fantasy-gpt4o-tool.request.json", response: "openai-chat/fantasy-gpt4o-tool.json"},
	{request: "openai-chat/fantasy-gpt4o-multi-tool-turn2.request.json", earlier: "openai-chat/fantasy-gpt4o-multi-tool.request.json", response: "openai-chat/fantasy-gpt4o-multi-tool.json"},
	{request: "openai-chat/llm-chain-of-two-calls-2.request.json", earlier: "openai-chat/llm-chain-of-two-calls-1.request.json", response: "openai-chat/llm-chain-of-two-calls-1.json", llmQuirks: true},
	{request: "openai-chat/llm-gpt4omini-tool-stream-turn2.request.json", earlier: "openai-chat/llm-gpt4omini-tool-stream.request.json", response: "openai-chat/llm-gpt4omini-tool-stream.sse", llmQuirks: true},
	{request: "openrouter/fantasy-anthropic-multi-tool-turn2.request.json", earlier: "openrouter/fantasy-anthropic-multi-tool.request.json", response: "openrouter/fantasy-anthropic-multi-tool.json"},
	{request: "openrouter/fantasy-gemini-tool-turn2.request.json", earlier: "openrouter/fantasy-gemini-tool.request.json", response: "openrouter/fantasy-gemini-tool.json"},
	{request: "openrouter/fantasy-kimi-multi-tool-turn2.request.json", earlier: "openrouter/fantasy-kimi-multi-tool.request.json", response: "openrouter/fantasy-kimi-multi-tool.json", plainReasoning: true},
	// pydantic-ai appends a synthetic search_tools call and its result of
	// its own (deferred capability loading) after the load_capability result.
	{request: "deepseek/pydantic-reasoner-tool-2.request.json", earlier: "deepseek/pydantic-reasoner-tool-1.request.json", response: "deepseek/pydantic-reasoner-tool-1.json", clientAdded: 2},
	{request: "deepseek/pydantic-reasoner-tool-3-final.request.json", earlier: "deepseek/pydantic-reasoner-tool-2.request.json", response: "deepseek/pydantic-reasoner-tool-2.json"},
}

// followUps marks the follow-up requests, which TestBuildRecordedRequests
// leaves to TestRebuildFollowUps.
var followUps = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range followUpCases {
		m[c.request] = true
	}
	return m
}()

// rebuild renders a follow-up request the way the loop would: the earlier
// request's history, the reply's Turn.Messages, then FormatToolResults of
// the results the recording sent. Model, tools, stream and max_tokens are
// the follow-up's own (clients may add tools between steps).
func rebuild(t testing.TB, c followUp) (built []byte, turn *providers.Turn) {
	t.Helper()
	p := New()
	earlier := requestFrom(t, providertest.Read(t, c.earlier))
	recorded := providertest.Read(t, c.request)
	next := requestFrom(t, recorded)

	turn, err := parseFixture(t, c.response)
	if err != nil {
		t.Fatalf("parse %s: %v", c.response, err)
	}
	// The results are the tool messages after the recorded echo of this
	// reply; the echo sits right after the earlier history (after llm's
	// extra empty message, when present).
	msgs := next.Messages
	pos := len(earlier.Messages) + 1
	if c.llmQuirks && isEmptyAssistant(msgs[len(earlier.Messages)]) {
		pos++
	}
	var results []providers.ToolResult
	for ; pos < len(msgs) && gjson.GetBytes(msgs[pos], "role").String() == "tool"; pos++ {
		m := gjson.ParseBytes(msgs[pos])
		results = append(results, providers.ToolResult{ID: m.Get("tool_call_id").String(), Content: m.Get("content").String()})
	}
	if len(results) != len(turn.Calls) {
		t.Fatalf("recording answers %d calls; the reply made %d", len(results), len(turn.Calls))
	}
	if pos+c.clientAdded != len(msgs) {
		t.Fatalf("%d messages after the results; the case expects %d", len(msgs)-pos, c.clientAdded)
	}
	formatted, err := p.FormatToolResults(results)
	if err != nil {
		t.Fatal(err)
	}

	history := append([]json.RawMessage{}, earlier.Messages...)
	history = append(history, turn.Messages...)
	history = append(history, formatted...)
	history = append(history, msgs[pos:]...) // what the client added itself
	next.Messages = history
	next.System = earlier.System
	built, err = p.BuildRequest(next)
	if err != nil {
		t.Fatal(err)
	}
	return built, turn
}

func isEmptyAssistant(m json.RawMessage) bool {
	r := gjson.ParseBytes(m)
	return r.Get("role").String() == "assistant" && r.Get("content").String() == "" && !r.Get("tool_calls").Exists()
}

// TestRebuildFollowUps rebuilds every recorded follow-up request and
// compares it, whole history included, with what the client sent.
func TestRebuildFollowUps(t *testing.T) {
	for _, c := range followUpCases {
		t.Run(c.request, func(t *testing.T) {
			built, turn := rebuild(t, c)
			recorded := providertest.Read(t, c.request)
			got, want := comparable(t, built), comparable(t, recorded)

			if c.llmQuirks {
				want["messages"] = dropEmptyAssistant(messagesOf(want))
				normalizeArguments(t, messagesOf(got))
				normalizeArguments(t, messagesOf(want))
			}
			if c.plainReasoning {
				reply := gjson.GetBytes(providertest.Read(t, c.response), "choices.0.message.reasoning").String()
				for _, m := range messagesOf(got) {
					m := m.(map[string]any)
					if r, ok := m["reasoning"]; ok {
						if r != reply {
							t.Errorf("echoed reasoning = %q; want the reply's %q", r, reply)
						}
						delete(m, "reasoning")
					}
				}
			}
			sameValue(t, "follow-up request", got, want)
			assertRoundTrip(t, c, turn)
		})
	}
}

// assertRoundTrip checks the provider state that must come back verbatim:
// call ids, and reasoning_content / reasoning_details byte for byte.
func assertRoundTrip(t *testing.T, c followUp, turn *providers.Turn) {
	t.Helper()
	echo := gjson.ParseBytes(turn.Messages[0])
	reply := providertest.Read(t, c.response)
	if strings.HasSuffix(c.response, ".json") {
		msg := gjson.GetBytes(reply, "choices.0.message")
		for _, field := range []string{"reasoning_content", "reasoning_details", "reasoning"} {
			if v := msg.Get(field); v.Exists() && v.Type != gjson.Null {
				if echo.Get(field).Raw != v.Raw {
					t.Errorf("echoed %s is not byte for byte the reply's:\n got %s\nwant %s", field, echo.Get(field).Raw, v.Raw)
				}
			}
		}
		for i, tc := range msg.Get("tool_calls").Array() {
			if got, want := echo.Get("tool_calls."+strconv.Itoa(i)+".function").Raw, tc.Get("function").Raw; got != want {
				t.Errorf("echoed call %d function = %s; want %s", i, got, want)
			}
		}
	}
	// Each recorded tool message answers a call the turn reported.
	ids := map[string]bool{}
	for _, call := range turn.Calls {
		ids[call.ID] = true
	}
	recorded := gjson.GetBytes(providertest.Read(t, c.request), "messages")
	answered := 0
	recorded.ForEach(func(_, m gjson.Result) bool {
		if m.Get("role").String() == "tool" && ids[m.Get("tool_call_id").String()] {
			answered++
		}
		return true
	})
	if answered != len(turn.Calls) {
		t.Errorf("%d recorded results match the turn's %d call ids", answered, len(turn.Calls))
	}
	switch c.request {
	case "openrouter/fantasy-gemini-tool-turn2.request.json", "openrouter/fantasy-kimi-multi-tool-turn2.request.json":
		// The recorded request's reasoning_details equal ours exactly.
		want := gjson.GetBytes(providertest.Read(t, c.request), "messages.2.reasoning_details").Raw
		providertest.SameJSON(t, "reasoning_details", []byte(echo.Get("reasoning_details").Raw), []byte(want))
		if want == "" {
			t.Error("recorded follow-up has no reasoning_details")
		}
	case "deepseek/pydantic-reasoner-tool-2.request.json", "deepseek/pydantic-reasoner-tool-3-final.request.json":
		if echo.Get("reasoning_content").String() == "" {
			t.Error("DeepSeek echo lost reasoning_content")
		}
	}
}

func dropEmptyAssistant(msgs []any) []any {
	var out []any
	for _, m := range msgs {
		mm := m.(map[string]any)
		if mm["role"] == "assistant" && mm["content"] == "" && mm["tool_calls"] == nil {
			continue
		}
		out = append(out, m)
	}
	return out
}

// normalizeArguments replaces each tool call's arguments string by its
// decoded value, so that {"a": 1} and {"a":1} compare equal.
func normalizeArguments(t testing.TB, msgs []any) {
	t.Helper()
	for _, m := range msgs {
		calls, _ := m.(map[string]any)["tool_calls"].([]any)
		for _, c := range calls {
			fn := c.(map[string]any)["function"].(map[string]any)
			var v any
			if err := json.Unmarshal([]byte(fn["arguments"].(string)), &v); err != nil {
				t.Fatalf("arguments are not JSON: %v", err)
			}
			fn["arguments"] = v
		}
	}
}
