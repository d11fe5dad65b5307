package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// TestAppendGoldens pins what `ask provider append` adds to the request
// `ask provider request` printed, for every wire protocol, from a recorded
// reply with tool calls (thinking blocks, signatures and reasoning where
// the recording has them): the golden is the conversation of the next
// request, and everything else in the request must be left as it was.
func TestAppendGoldens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, provider string
		reply          string // under testdata/stages/fixtures, or the text itself for command
		extra          []string
	}{
		{"openai", "openai", "openai-chat/fantasy-gpt4o-multi-tool-stream.sse", nil},
		{"deepseek-reasoning", "deepseek", "deepseek/pydantic-reasoner-tool-1.json", nil},
		{"openai-responses", "openai-responses", "openai-responses/fantasy-gpt4o-multi-tool-stream.sse", nil},
		{"anthropic-thinking", "anthropic", "anthropic/llm-anthropic-thinking-tool-stream.sse", nil},
		{"gemini-thought-signature", "gemini", "gemini/pydantic-3pro-stream-thought-signature.sse", nil},
		{"ollama", "ollama", "ollama/fantasy-pr63-gptoss120b-tool-stream.ndjson", nil},
		{"openai-json-tool-protocol", "openai", "", []string{"--tool-protocol", "json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wd := t.TempDir()
			flags := append([]string{"-p", tt.provider}, tt.extra...)
			req := runAsk(t, askEnv{wd: wd}, append(append([]string{"provider", "request"}, flags...), "what is in go.mod?")...)
			if req.code != 0 {
				t.Fatalf("provider request: exit %d: %s", req.code, req.stderr)
			}
			var reply []byte
			if tt.reply != "" {
				reply = []byte(readTestdata(t, "stages/fixtures/"+tt.reply))
			} else {
				reply = []byte(`I will read it. {"tool": "read_file", "parameters": {"path": "go.mod"}, "terminate": false}`)
				reply, _ = json.Marshal(map[string]any{"id": "x", "object": "chat.completion",
					"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(reply)}}}})
			}
			write(t, filepath.Join(wd, "reply"), reply)
			calls := runAsk(t, askEnv{wd: wd}, append(append([]string{"provider", "parse-tool-calls"}, flags...), "reply")...)
			if calls.code != 0 {
				t.Fatalf("parse-tool-calls: exit %d: %s", calls.code, calls.stderr)
			}
			parsed, err := providers.ParseToolCallsJSON([]byte(calls.stdout))
			if err != nil || len(parsed) == 0 {
				t.Fatalf("no calls in the reply (%v): %s", err, calls.stdout)
			}
			var results []providers.ToolResult
			for i, c := range parsed {
				results = append(results, providers.ToolResult{ID: c.ID, Name: c.Name, Content: "result of " + c.Name, IsError: i == 1})
			}
			b, _ := json.Marshal(results)
			write(t, filepath.Join(wd, "results.json"), b)
			write(t, filepath.Join(wd, "request.json"), []byte(req.stdout))

			r := runAsk(t, askEnv{wd: wd}, append(append([]string{"provider", "append"}, flags...), "--reply", "reply", "--results", "results.json", "request.json")...)
			if r.code != 0 {
				t.Fatalf("append: exit %d: %s", r.code, r.stderr)
			}
			field := map[string]string{"openai-responses": "input", "gemini": "contents"}[tt.provider]
			if field == "" {
				field = "messages"
			}
			before, after := gjson.Get(req.stdout, field).Array(), gjson.Get(r.stdout, field).Array()
			if len(after) <= len(before) {
				t.Fatalf("%s: %d items before, %d after", field, len(before), len(after))
			}
			for i := range before {
				if before[i].Raw != after[i].Raw {
					t.Errorf("%s[%d] changed:\n%s\n%s", field, i, before[i].Raw, after[i].Raw)
				}
			}
			// Outside the conversation nothing changes.
			if strip(t, req.stdout, field) != strip(t, r.stdout, field) {
				t.Errorf("the request changed outside %s:\n%s\n%s", field, req.stdout, r.stdout)
			}
			var added []json.RawMessage
			for _, v := range after[len(before):] {
				added = append(added, json.RawMessage(v.Raw))
			}
			golden(t, "append/"+tt.name, providers.JoinArray(added))
		})
	}
}

func strip(t *testing.T, body, field string) string {
	t.Helper()
	out, err := providers.SetRaw([]byte(body), field, []byte("null"))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
