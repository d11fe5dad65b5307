package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// TestLoop drives the floor's request and tools against the fake provider
// the bench uses: a streamed call of each tool, then the answer.
func TestLoop(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("c1", "shell", `{"command":"echo hi"}`),
			fakeprovider.Call("c2", "read_file", `{"path":"f.txt"}`),
		}},
		fakeprovider.Reply{Text: "Done."},
	)
	defer srv.Close()
	msgs := []message{{Role: "user", Content: "go"}}
	reply, err := send(srv.URL+"/v1", "m", msgs)
	if err != nil || len(reply.ToolCalls) != 2 {
		t.Fatalf("first reply: %+v, %v", reply, err)
	}
	msgs = append(msgs, reply)
	var results []string
	for _, c := range reply.ToolCalls {
		out := runTool(dir, c)
		results = append(results, out)
		msgs = append(msgs, message{Role: "tool", ToolCallID: c.ID, Content: out})
	}
	if results[0] != "hi\n" || results[1] != "1: alpha\n2: beta\n" {
		t.Errorf("tool results %q", results)
	}
	reply, err = send(srv.URL+"/v1", "m", msgs)
	if err != nil || reply.Content != "Done." || len(reply.ToolCalls) != 0 {
		t.Fatalf("second reply: %+v, %v", reply, err)
	}
	reqs := srv.Requests()
	var last struct{ Messages []message }
	if len(reqs) != 2 || json.Unmarshal(reqs[1], &last) != nil || len(last.Messages) != 4 ||
		last.Messages[1].ToolCalls[1].Function.Name != "read_file" || !strings.Contains(string(reqs[0]), `"stream":true`) {
		t.Errorf("requests:\n%s", reqs)
	}
}
