package command

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

func TestRender(t *testing.T) {
	p := Plain{}
	user, _ := p.UserMessage("what module is this?")
	asst, _ := p.ParseResponse([]byte(`{"tool": "read_file", "parameters": {"path": "go.mod"}}`))
	results, _ := p.FormatToolResults([]providers.ToolResult{{ID: "c", Name: "read_file", Content: "1: module example.com/x\n"}})
	history := append([]json.RawMessage{user}, asst.Messages...)
	history = append(history, results...)
	body, err := p.BuildRequest(providers.Request{Model: "qwen3", System: "You are ask.\n", Messages: history})
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := Render(body)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, "render", providertest.Marshal(t, map[string]any{"request": json.RawMessage(body), "stdin": strings.Split(stdin, "\n")}))
	if !strings.HasSuffix(stdin, "\n\n[assistant]\n") {
		t.Errorf("stdin does not end by inviting the reply: %q", stdin)
	}
	if _, err := Render([]byte("not json")); err == nil {
		t.Error("Render accepted a body that is not JSON")
	}
}

func TestPlainProtocol(t *testing.T) {
	p := Plain{}
	if _, err := p.BuildRequest(providers.Request{Tools: []providers.Tool{{Name: "x"}}}); err == nil {
		t.Error("Plain accepted native tools")
	}
	if _, err := p.BuildRequest(providers.Request{Messages: []json.RawMessage{json.RawMessage(`[1]`)}}); err == nil {
		t.Error("Plain accepted a message without a role")
	}
	turn, err := p.ParseResponse([]byte("hi <b>"))
	if err != nil || turn.Text != "hi <b>" || string(turn.Messages[0]) != `{"role":"assistant","content":"hi <b>"}` {
		t.Errorf("ParseResponse = %+v, %v", turn, err)
	}
	if calls, err := p.ParseToolCalls([]byte("x")); calls != nil || err != nil {
		t.Errorf("ParseToolCalls = %v, %v", calls, err)
	}
	s := p.NewStream()
	s.Add(providers.Event{Data: []byte("a")})
	s.Add(providers.Event{Data: []byte("b")})
	if turn, _ := s.Turn(); turn.Text != "a\nb\n" || s.Done() {
		t.Errorf("stream turn = %+v", turn)
	}
	if msgs, _ := p.FormatToolResults(nil); msgs != nil {
		t.Errorf("FormatToolResults(nil) = %s", msgs)
	}
}
