package ollama

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
	"github.com/tidwall/gjson"
)

// TestBuildRecordedRequests renders every recorded first-turn request from
// its own system prompt, history and tools. The only difference is the reply
// cap: fantasy sent a top-level "max_tokens", which Ollama's ChatRequest does
// not have (the server ignores it); this package sends options.num_predict.
func TestBuildRecordedRequests(t *testing.T) {
	tests := []string{
		"fantasy-pr63-gptoss120b-tool.request.json",
		"fantasy-pr63-gptoss120b-multi-tool.request.json",
		"fantasy-pr63-gptoss120b-tool-stream.request.json",
		"fantasy-pr63-gptoss120b-multi-tool-stream.request.json",
		"fantasy-pr63-gptoss20b-tool-stream.request.json",
	}
	p := New()
	for _, name := range tests {
		t.Run(name, func(t *testing.T) {
			recorded := providertest.Read(t, name)
			req := recordedRequest(t, name)
			body, err := p.BuildRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := gjson.GetBytes(body, "options.num_predict").Int(); got != 4000 {
				t.Errorf("options.num_predict = %d, want the recording's max_tokens 4000", got)
			}
			providertest.SameJSON(t, name, without(t, body, "options"), without(t, recorded, "max_tokens"))
		})
	}
}

// TestRebuildFollowUps rebuilds each recorded second request from the turn
// before it: the first request's history, Turn.Messages of the first reply
// and FormatToolResults of the results the recording sends.
//
// fantasy's follow-ups are not canonical (WIRE-FORMATS.md §13), so the
// recording is first brought to the canonical form of Ollama's tool-calling
// docs, one documented edit at a time (canonical below); everything else —
// roles, order, system and user text, tool names, argument objects, result
// contents, tools, model, stream — must match as recorded.
func TestRebuildFollowUps(t *testing.T) {
	tests := []struct {
		name string
		prev string // the first turn: prev.request.json and prev.json
		next string // the recorded follow-up request
	}{
		{"weather", "fantasy-pr63-gptoss120b-tool", "fantasy-pr63-gptoss120b-tool-turn2"},
		{"add then multiply", "fantasy-pr63-gptoss120b-multi-tool", "fantasy-pr63-gptoss120b-multi-tool-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply := providertest.Read(t, tt.prev+".json")
			recordedNext := providertest.Read(t, tt.next+".request.json")
			body, turn, results := rebuild(t, tt.prev, recordedNext)

			want := canonical(t, recordedNext, turn)
			providertest.SameJSON(t, "follow-up request", without(t, body, "options"), want)

			// Round-trip state, asserted one by one.
			echo := turn.Messages[0]
			if !bytes.Contains(body, echo) {
				t.Errorf("the echoed assistant message is not in the request byte for byte:\n%s", echo)
			}
			checks := []struct{ what, got, want string }{
				{"echoed thinking", gjson.GetBytes(echo, "thinking").String(), gjson.GetBytes(reply, "message.thinking").String()},
				{"echoed content", gjson.GetBytes(echo, "content").Raw, `""`},
				{"echoed call id", gjson.GetBytes(echo, "tool_calls.0.id").String(), gjson.GetBytes(reply, "message.tool_calls.0.id").String()},
				{"echoed arguments (raw)", gjson.GetBytes(echo, "tool_calls.0.function.arguments").Raw, gjson.GetBytes(reply, "message.tool_calls.0.function.arguments").Raw},
				{"result tool_call_id", gjson.GetBytes(results[0], "tool_call_id").String(), turn.Calls[0].ID},
				{"result tool_name", gjson.GetBytes(results[0], "tool_name").String(), turn.Calls[0].Name},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
				}
			}
			if !gjson.GetBytes(echo, "tool_calls.0.function.arguments").IsObject() {
				t.Errorf("echoed arguments are not an object: %s", echo)
			}
		})
	}
}

// rebuild renders the follow-up of turn prev as the loop would, answering
// each call with the content the recording sent for it.
func rebuild(t *testing.T, prev string, recordedNext []byte) ([]byte, *providers.Turn, []json.RawMessage) {
	t.Helper()
	p := New()
	req := recordedRequest(t, prev+".request.json")
	turn, err := p.ParseResponse(providertest.Read(t, prev+".json"))
	if err != nil {
		t.Fatal(err)
	}
	toolMsgs := gjson.GetBytes(recordedNext, `messages.#(role=="tool")#`).Array()
	if len(toolMsgs) != len(turn.Calls) || len(toolMsgs) == 0 {
		t.Fatalf("recording answers %d calls, the reply made %d", len(toolMsgs), len(turn.Calls))
	}
	results := make([]providers.ToolResult, len(toolMsgs))
	for i, m := range toolMsgs {
		if name := m.Get("tool_name").String(); name != turn.Calls[i].Name {
			t.Fatalf("result %d answers %q, call %d is %q", i, name, i, turn.Calls[i].Name)
		}
		results[i] = providers.ToolResult{ID: turn.Calls[i].ID, Name: turn.Calls[i].Name, Content: m.Get("content").String()}
	}
	formatted, err := p.FormatToolResults(results)
	if err != nil {
		t.Fatal(err)
	}
	next := req
	next.Messages = slices.Concat(req.Messages, turn.Messages, formatted)
	body, err := p.BuildRequest(next)
	if err != nil {
		t.Fatal(err)
	}
	return body, turn, formatted
}

// canonical edits fantasy's recorded follow-up into the request Ollama's docs
// describe, given the turn this package read from the first reply:
//
//   - max_tokens is dropped: not an Ollama field (this package sends
//     options.num_predict, dropped from its side before comparing).
//   - the assistant message's content is fantasy's copy of the previous
//     thinking; canonically the thinking travels in "thinking" and content is
//     what the model said (here ""). The test asserts the two texts are the
//     same before moving it.
//   - tool_calls[].type "function" is dropped: OpenAI's field, absent from
//     Ollama's ToolCall.
//   - tool_calls[].id and the tool message's tool_call_id are fantasy's own
//     counter "0"; the canonical echo keeps the server's id (call_…), and the
//     result answers that id.
func canonical(t *testing.T, recorded []byte, turn *providers.Turn) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(recorded, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "max_tokens")
	msgs, _ := doc["messages"].([]any)
	results := 0
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		switch msg["role"] {
		case "assistant":
			if msg["content"] != turn.Reasoning {
				t.Fatalf("recorded assistant content %q is not the reply's thinking %q", msg["content"], turn.Reasoning)
			}
			msg["content"] = turn.Text
			msg["thinking"] = turn.Reasoning
			calls, _ := msg["tool_calls"].([]any)
			for i, c := range calls {
				call, _ := c.(map[string]any)
				if call["id"] != "0" || call["type"] != "function" {
					t.Fatalf("recorded call %d: id %v type %v, want fantasy's \"0\" and \"function\"", i, call["id"], call["type"])
				}
				delete(call, "type")
				call["id"] = turn.Calls[i].ID
			}
		case "tool":
			if msg["tool_call_id"] != "0" {
				t.Fatalf("recorded tool_call_id %v, want fantasy's \"0\"", msg["tool_call_id"])
			}
			msg["tool_call_id"] = turn.Calls[results].ID
			results++
		}
	}
	return providertest.Marshal(t, doc)
}

// without returns body with one top-level key removed.
func without(t testing.TB, body []byte, key string) []byte {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	delete(doc, key)
	return providertest.Marshal(t, doc)
}
