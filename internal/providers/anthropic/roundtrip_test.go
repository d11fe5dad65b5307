package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// followUps are the recorded second requests, each with the request and the
// reply of the turn before it.
var followUps = []struct {
	name                   string
	prevRequest, prevReply string
	nextRequest            string
}{
	{"fantasy-sonnet4-tool", "fantasy-sonnet4-tool.request.json", "fantasy-sonnet4-tool.json", "fantasy-sonnet4-tool-turn2.request.json"},
	{"fantasy-sonnet4-multi-tool", "fantasy-sonnet4-multi-tool.request.json", "fantasy-sonnet4-multi-tool.json", "fantasy-sonnet4-multi-tool-turn2.request.json"},
	{"sdkgo-tool-result-is-error", "sdkgo-tool-call.request.json", "sdkgo-tool-call.json", "sdkgo-tool-result-is-error-turn2.request.json"},
	{"llm-anthropic-thinking-tool-stream", "llm-anthropic-thinking-tool-stream.request.json", "llm-anthropic-thinking-tool-stream.sse", "llm-anthropic-thinking-tool-stream-turn2.request.json"},
}

// rebuilt is a follow-up request rebuilt from the turn before it.
type rebuilt struct {
	body      []byte
	turn      *providers.Turn
	results   []providers.ToolResult
	formatted []json.RawMessage // FormatToolResults' output
}

// rebuildFollowUp renders the next request as the loop would: the earlier
// request's settings and messages, the reply's Turn.Messages, then the tool
// results that the recorded follow-up sent, through FormatToolResults.
func rebuildFollowUp(t *testing.T, prevReq, reply, nextReq []byte) rebuilt {
	t.Helper()
	p := New()
	turn, err := providers.ParseBody(p, reply)
	if err != nil {
		t.Fatalf("parse reply: %v", err)
	}
	results := recordedResults(t, nextReq, turn.Calls)
	formatted, err := p.FormatToolResults(results)
	if err != nil {
		t.Fatalf("FormatToolResults: %v", err)
	}

	prev := gjson.ParseBytes(prevReq)
	var messages []json.RawMessage
	for _, m := range prev.Get("messages").Array() {
		messages = append(messages, json.RawMessage(m.Raw))
	}
	messages = append(messages, turn.Messages...)
	messages = append(messages, formatted...)

	var tools []providers.Tool
	for _, tl := range prev.Get("tools").Array() {
		tools = append(tools, providers.Tool{
			Name:        tl.Get("name").String(),
			Description: tl.Get("description").String(),
			Parameters:  json.RawMessage(tl.Get("input_schema").Raw),
		})
	}
	body, err := p.BuildRequest(providers.Request{
		Model:     prev.Get("model").String(),
		System:    systemText(prev.Get("system")),
		Messages:  messages,
		Tools:     tools,
		Stream:    prev.Get("stream").Bool(),
		MaxTokens: int(prev.Get("max_tokens").Int()),
	})
	if err != nil {
		t.Fatalf("BuildRequest: %v", err)
	}
	return rebuilt{body, turn, results, formatted}
}

// recordedResults reads the tool_result blocks of the follow-up's last
// message back into standardized results.
func recordedResults(t *testing.T, nextReq []byte, calls []providers.ToolCall) []providers.ToolResult {
	t.Helper()
	names := map[string]string{}
	for _, c := range calls {
		names[c.ID] = c.Name
	}
	last := gjson.GetBytes(nextReq, "messages.@reverse.0")
	var results []providers.ToolResult
	for _, b := range last.Get("content").Array() {
		if b.Get("type").String() != "tool_result" {
			continue
		}
		id := b.Get("tool_use_id").String()
		results = append(results, providers.ToolResult{
			ID:      id,
			Name:    names[id],
			Content: textOf(b.Get("content")),
			IsError: b.Get("is_error").Bool(),
		})
	}
	if len(results) == 0 {
		t.Fatal("the follow-up request holds no tool results")
	}
	return results
}

// textOf reads content that is a string or an array of text blocks.
func textOf(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.String()
	}
	var b strings.Builder
	for _, blk := range v.Array() {
		b.WriteString(blk.Get("text").String())
	}
	return b.String()
}

// systemText reads a system prompt given as a string or as text blocks.
func systemText(v gjson.Result) string {
	if !v.Exists() {
		return ""
	}
	return textOf(v)
}

// normalize removes what clients legitimately render differently, so that
// a rebuilt request and a recorded one can be compared in meaning:
//   - tool_choice, temperature and thinking: settings ask does not send
//     (auto is the API's default tool choice; the recorded clients chose the
//     rest), and "stream":false, which equals leaving it out;
//   - system and tool_result content given as text blocks become the string
//     they spell, the form ask sends;
//   - tool_use "caller" is added by the server; ask echoes it as received
//     (the API accepts it on input), the recorded clients rebuilt the block
//     from their own types and dropped it;
//   - an empty tool description, which ask leaves out.
func normalize(t *testing.T, body []byte) []byte {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request is not a JSON object: %v", err)
	}
	delete(req, "tool_choice")
	delete(req, "temperature")
	delete(req, "thinking")
	if req["stream"] == false {
		delete(req, "stream")
	}
	if sys, ok := req["system"].([]any); ok {
		req["system"] = joinText(sys)
	}
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		blocks, _ := m.(map[string]any)["content"].([]any)
		for _, b := range blocks {
			blk := b.(map[string]any)
			delete(blk, "caller")
			if parts, ok := blk["content"].([]any); ok && blk["type"] == "tool_result" {
				blk["content"] = joinText(parts)
			}
		}
	}
	tools, _ := req["tools"].([]any)
	for _, tl := range tools {
		if tool := tl.(map[string]any); tool["description"] == "" {
			delete(tool, "description")
		}
	}
	return providertest.Marshal(t, req)
}

func joinText(blocks []any) string {
	var b strings.Builder
	for _, blk := range blocks {
		if m, ok := blk.(map[string]any); ok {
			s, _ := m["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// TestRebuildFollowUps rebuilds every recorded follow-up request and
// compares it in meaning with what was sent.
func TestRebuildFollowUps(t *testing.T) {
	for _, tt := range followUps {
		t.Run(tt.name, func(t *testing.T) {
			next := providertest.Read(t, tt.nextRequest)
			r := rebuildFollowUp(t, providertest.Read(t, tt.prevRequest), providertest.Read(t, tt.prevReply), next)
			providertest.SameJSON(t, "request", normalize(t, r.body), normalize(t, next))

			// The same ids on both sides: every recorded result answers a
			// call this package parsed, in order.
			if len(r.results) != len(r.turn.Calls) {
				t.Fatalf("%d recorded results for %d parsed calls", len(r.results), len(r.turn.Calls))
			}
			for i, c := range r.turn.Calls {
				if r.results[i].ID != c.ID {
					t.Errorf("result %d answers %q, call %d is %q", i, r.results[i].ID, i, c.ID)
				}
			}
			// The results of one step are one user message, placed last.
			if len(r.formatted) != 1 {
				t.Fatalf("FormatToolResults gave %d messages, want 1", len(r.formatted))
			}
			last := gjson.GetBytes(r.body, "messages.@reverse.0")
			if got := last.Get("role").String(); got != "user" {
				t.Errorf("last message role = %q, want user", got)
			}
			if got := len(last.Get("content").Array()); got != len(r.results) {
				t.Errorf("last message holds %d blocks, want %d tool_result blocks", got, len(r.results))
			}
		})
	}
}

// TestFollowUpBothResultsInOneMessage: parallel calls are answered by ONE
// user message holding both tool_result blocks.
func TestFollowUpBothResultsInOneMessage(t *testing.T) {
	r := rebuildFollowUp(t, providertest.Read(t, "fantasy-sonnet4-multi-tool.request.json"),
		providertest.Read(t, "fantasy-sonnet4-multi-tool.json"),
		providertest.Read(t, "fantasy-sonnet4-multi-tool-turn2.request.json"))
	msgs := gjson.GetBytes(r.body, "messages").Array()
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want user, assistant, user", len(msgs))
	}
	blocks := msgs[2].Get("content").Array()
	want := []struct{ id, content string }{
		{"toolu_01StBeRxDEwsqcc3arbDgpS9", "5"},
		{"toolu_01AC6WQhj2iRkdYHgTAGMpVQ", "6"},
	}
	if len(blocks) != len(want) {
		t.Fatalf("user message holds %d blocks, want %d", len(blocks), len(want))
	}
	for i, w := range want {
		b := blocks[i]
		if b.Get("type").String() != "tool_result" || b.Get("tool_use_id").String() != w.id || b.Get("content").String() != w.content {
			t.Errorf("block %d = %s, want tool_result for %s with %q", i, b.Raw, w.id, w.content)
		}
		if b.Get("is_error").Exists() {
			t.Errorf("block %d carries is_error though the call succeeded: %s", i, b.Raw)
		}
	}
}

// TestFollowUpCarriesIsError: a failed call's result says is_error:true.
func TestFollowUpCarriesIsError(t *testing.T) {
	r := rebuildFollowUp(t, providertest.Read(t, "sdkgo-tool-call.request.json"),
		providertest.Read(t, "sdkgo-tool-call.json"),
		providertest.Read(t, "sdkgo-tool-result-is-error-turn2.request.json"))
	b := gjson.GetBytes(r.body, "messages.2.content.0")
	if got := b.Get("is_error"); got.Type != gjson.True {
		t.Errorf("is_error = %s, want true in %s", got.Raw, b.Raw)
	}
	if got, want := b.Get("content").String(), "Error: Unexpected error, try again"; got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
}

// TestFollowUpEchoesStreamedThinking: the thinking block rebuilt from the
// stream's deltas, signature included, is what the recorded follow-up sent,
// byte for byte, and comes before the tool_use block.
func TestFollowUpEchoesStreamedThinking(t *testing.T) {
	next := providertest.Read(t, "llm-anthropic-thinking-tool-stream-turn2.request.json")
	r := rebuildFollowUp(t, providertest.Read(t, "llm-anthropic-thinking-tool-stream.request.json"),
		providertest.Read(t, "llm-anthropic-thinking-tool-stream.sse"), next)
	got := gjson.GetBytes(r.body, "messages.1.content")
	want := gjson.GetBytes(next, "messages.1.content")
	if got.Get("0.type").String() != "thinking" || got.Get("1.type").String() != "tool_use" {
		t.Fatalf("echoed blocks = %s, want thinking then tool_use", got.Raw)
	}
	for _, field := range []string{"0.thinking", "0.signature"} {
		g, w := got.Get(field), want.Get(field)
		if w.String() == "" {
			t.Fatalf("recorded %s is empty", field)
		}
		providertest.SameBytes(t, field+" (JSON text)", []byte(g.Raw), []byte(w.Raw))
		if g.String() != w.String() {
			t.Errorf("%s value differs", field)
		}
	}
	if got, want := got.Get("1.input").Raw, "{}"; got != want {
		t.Errorf("zero-argument tool_use input = %s, want %s", got, want)
	}
	if got := r.turn.Calls[0].Arguments; got != "{}" {
		t.Errorf("zero-argument call arguments = %q, want {}", got)
	}
	// The thinking block must be echoed only in the history, never shown
	// as the answer.
	if r.turn.Text != "" || !strings.HasPrefix(r.turn.Reasoning, "The user wants me to:") {
		t.Errorf("text = %q, reasoning = %q", r.turn.Text, r.turn.Reasoning)
	}
}

// TestNonStreamThinkingEchoed: a non-streamed thinking block comes back with
// its signature, byte for byte.
func TestNonStreamThinkingEchoed(t *testing.T) {
	body := providertest.Read(t, "pydantic-tool-with-thinking.json")
	turn, err := New().ParseResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	got := gjson.GetBytes(turn.Messages[0], "content.0")
	want := gjson.GetBytes(body, "content.0")
	if got.Get("type").String() != "thinking" || want.Get("signature").String() == "" {
		t.Fatalf("first block = %s, want a signed thinking block", got.Raw)
	}
	providertest.SameBytes(t, "thinking block", []byte(got.Raw), []byte(want.Raw))
}
