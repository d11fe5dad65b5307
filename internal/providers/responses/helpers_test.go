package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// recorded reads a testdata JSON file.
func recorded(t testing.TB, name string) gjson.Result {
	t.Helper()
	b := providertest.Read(t, name)
	if !gjson.ValidBytes(b) {
		t.Fatalf("%s is not valid JSON", name)
	}
	return gjson.ParseBytes(b)
}

// rawItems returns a JSON array's elements as raw messages.
func rawItems(arr gjson.Result) []json.RawMessage {
	var out []json.RawMessage
	for _, it := range arr.Array() {
		out = append(out, json.RawMessage(it.Raw))
	}
	return out
}

// toolsOf reads the flat function tools of a recorded request back into the
// standardized form.
func toolsOf(req gjson.Result) []providers.Tool {
	var tools []providers.Tool
	for _, t := range req.Get("tools").Array() {
		tool := providers.Tool{Name: t.Get("name").String(), Description: t.Get("description").String()}
		if p := t.Get("parameters"); p.IsObject() {
			tool.Parameters = json.RawMessage(p.Raw)
		}
		tools = append(tools, tool)
	}
	return tools
}

// requestOf turns a recorded request into the Request ask would make for it:
// its input as history, its tools, its max_output_tokens and stream flag.
// System prompts stay in the input, where the recording put them.
func requestOf(req gjson.Result) providers.Request {
	return providers.Request{
		Model:     req.Get("model").String(),
		Messages:  rawItems(req.Get("input")),
		Tools:     toolsOf(req),
		Stream:    req.Get("stream").Bool(),
		MaxTokens: int(req.Get("max_output_tokens").Int()),
	}
}

// trailingResults reads the function_call_output items that end a recorded
// follow-up request: the results of the step before it.
func trailingResults(req gjson.Result) []providers.ToolResult {
	input := req.Get("input").Array()
	start := len(input)
	for start > 0 && input[start-1].Get("type").String() == "function_call_output" {
		start--
	}
	var results []providers.ToolResult
	for _, it := range input[start:] {
		results = append(results, providers.ToolResult{ID: it.Get("call_id").String(), Content: it.Get("output").String()})
	}
	return results
}

// turnJSON is what the golden files hold for one parsed reply.
func turnJSON(t testing.TB, turn *providers.Turn) []byte {
	t.Helper()
	calls := turn.Calls
	if calls == nil {
		calls = []providers.ToolCall{}
	}
	return providertest.Marshal(t, map[string]any{
		"text":        turn.Text,
		"reasoning":   turn.Reasoning,
		"calls":       calls,
		"usage":       turn.Usage,
		"stop_reason": turn.StopReason,
		"messages":    turn.Messages,
	})
}

// normalizeArguments rewrites the arguments string of every function_call
// item in a JSON array into compact canonical JSON, so that "{\"a\": 1}" and
// "{\"a\":1}" compare equal. Used where a recording client re-serialised the
// model's arguments (simonw/llm adds spaces); ask echoes them untouched,
// which a separate assertion checks.
func normalizeArguments(t testing.TB, items []byte) []byte {
	t.Helper()
	var arr []map[string]any
	if err := json.Unmarshal(items, &arr); err != nil {
		t.Fatalf("input is not an array of objects: %v", err)
	}
	for _, it := range arr {
		if it["type"] != "function_call" {
			continue
		}
		s, _ := it["arguments"].(string)
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			it["arguments"] = string(providertest.Marshal(t, v))
		}
	}
	return providertest.Marshal(t, arr)
}

// without returns a copy of a JSON object minus some top-level keys and,
// for "tools.strict", the strict flag of every tool.
func without(t testing.TB, body []byte, keys ...string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not an object: %v", err)
	}
	for _, k := range keys {
		if k == "tools.strict" {
			tools, _ := m["tools"].([]any)
			for _, tool := range tools {
				delete(tool.(map[string]any), "strict")
			}
			continue
		}
		delete(m, k)
	}
	return providertest.Marshal(t, m)
}

// checkReplay asserts the stateless-replay rules on a built request's input:
// no function_call carries its "fc_" item id; every reasoning item has
// encrypted_content and is followed, after any further reasoning items, by
// a non-reasoning item (never by the end of the input or a function output);
// no item replays an "fc_", "msg_" or un-encrypted "rs_" id; every
// function_call_output answers, by call_id, a function_call before it.
func checkReplay(t testing.TB, body []byte) {
	t.Helper()
	input := gjson.GetBytes(body, "input").Array()
	calls := map[string]bool{}
	for i, it := range input {
		typ := it.Get("type").String()
		id := it.Get("id").String()
		switch typ {
		case "function_call":
			if it.Get("id").Exists() {
				t.Errorf("input[%d]: function_call replays its item id %q", i, id)
			}
			calls[it.Get("call_id").String()] = true
		case "reasoning":
			if it.Get("encrypted_content").String() == "" {
				t.Errorf("input[%d]: reasoning item %q without encrypted_content is replayed", i, id)
			}
			j := i + 1
			for j < len(input) && input[j].Get("type").String() == "reasoning" {
				j++
			}
			if j == len(input) || input[j].Get("type").String() == "function_call_output" || input[j].Get("role").String() == "user" {
				t.Errorf("input[%d]: reasoning item %q is not followed by the item it came with", i, id)
			}
		case "function_call_output":
			if !calls[it.Get("call_id").String()] {
				t.Errorf("input[%d]: output for call_id %q, which no earlier function_call has", i, it.Get("call_id").String())
			}
		default:
			if strings.HasPrefix(id, "msg_") || strings.HasPrefix(id, "fc_") {
				t.Errorf("input[%d]: %s item replays the id %q", i, typ, id)
			}
		}
	}
}
