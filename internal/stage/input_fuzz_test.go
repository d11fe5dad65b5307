package stage

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

var faultAt = regexp.MustCompile(`line (\d+), column (\d+)`)

// FuzzStageInputChecks feeds arbitrary input to the checks every stage
// runs before a protocol sees it: they never panic, accept exactly what
// the JSON decoder accepts (a request body: exactly the objects), and
// point inside (or just past) the input, entry checks included.
func FuzzStageInputChecks(f *testing.F) {
	for _, seed := range []string{"", "[]", `{"a":}`, "data: {}\n\ndata: [DONE]\n\n", "{\"done\":true}\n{\"x\":", "data: {\"a\":\ndata: 1}\r\n\r\n", "\xff\xfe",
		"null", " [1,2]", "[{\"id\":\"\"},\n null]", "[{\"type\":\"x\"}]"} {
		f.Add([]byte(seed))
	}
	for _, name := range []string{"openai-chat/llm-gpt4omini-tool-stream.sse", "ollama/fantasy-pr63-gptoss120b-tool-stream.ndjson", "anthropic/sdkgo-tool-call.json"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "cmd", "ask", "testdata", "stages", "fixtures", name)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := Input{Name: "stdin", Data: data}
		err := in.CheckJSON()
		if (err == nil) != (json.Valid(data) && len(bytes.TrimSpace(data)) > 0) {
			t.Fatalf("CheckJSON(%q) = %v, json.Valid says %v", data, err, json.Valid(data))
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		var calls []providers.ToolCall
		var results []providers.ToolResult
		var tools []StandardTool
		body := in.CheckRequestBody()
		if (body == nil) != (err == nil && gjson.ParseBytes(data).IsObject()) {
			t.Fatalf("CheckRequestBody(%q) = %v", data, body)
		}
		for _, check := range []error{err, in.CheckStream(providers.SSE), in.CheckStream(providers.NDJSON),
			body, in.Decode(&calls), in.Decode(&results), in.Decode(&tools)} {
			if check == nil {
				continue
			}
			if m := faultAt.FindStringSubmatch(check.Error()); m != nil {
				line, _ := strconv.Atoi(m[1])
				col, _ := strconv.Atoi(m[2])
				if line < 1 || line > lines || col < 1 || col > len(data)+1 {
					t.Fatalf("%v: position outside the input of %d lines, %d bytes", check, lines, len(data))
				}
			}
		}
	})
}
