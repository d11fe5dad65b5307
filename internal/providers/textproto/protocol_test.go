package textproto

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/anthropic"
	"github.com/ask-cli/ask/internal/providers/ollama"
	"github.com/ask-cli/ask/internal/providers/openai"
)

const callReply = "Reading it.\n" + `{"tool": "read_file", "parameters": {"path": "go.mod"}, "terminate": false}`

func TestBuildRequestDeclaresNoTools(t *testing.T) {
	tools := testTools(t)
	for _, inner := range []providers.Protocol{openai.New(), anthropic.New(), ollama.New()} {
		t.Run(inner.Name(), func(t *testing.T) {
			p := Wrap(inner, JSON, tools)
			user, _ := p.UserMessage("what module is this?")
			body, err := p.BuildRequest(providers.Request{Model: "m", System: "You are ask.", Messages: []json.RawMessage{user}, Tools: tools})
			if err != nil {
				t.Fatal(err)
			}
			if gjson.GetBytes(body, "tools").Exists() {
				t.Errorf("tools declared: %s", body)
			}
			if !bytes.Contains(body, []byte(`You are ask.\n\n# Tools`)) || !bytes.Contains(body, []byte(`read_file(path: string`)) {
				t.Errorf("system prompt lacks the instructions: %s", body)
			}
			if !bytes.Contains(body, []byte("what module is this?")) {
				t.Errorf("history lost: %s", body)
			}
			if tt, _ := p.FormatTools(tools); tt != nil {
				t.Errorf("FormatTools = %s", tt)
			}
		})
	}
}

func TestParseResponseReadsCallsFromText(t *testing.T) {
	p := Wrap(openai.New(), JSON, testTools(t))
	turn, err := p.ParseResponse(fakeprovider.ChatJSON(fakeprovider.Reply{Text: callReply}))
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Calls) != 1 || turn.Calls[0].Name != "read_file" || turn.Text != "Reading it." || turn.Invalid != "" || turn.Terminate {
		t.Errorf("turn = %+v", turn)
	}
	// The model sees its own reply verbatim in the history.
	if len(turn.Messages) != 1 || gjson.GetBytes(turn.Messages[0], "content").String() != callReply {
		t.Errorf("messages = %s", turn.Messages)
	}
	calls, err := p.ParseToolCalls(fakeprovider.ChatJSON(fakeprovider.Reply{Text: callReply}))
	if err != nil || len(calls) != 1 {
		t.Errorf("ParseToolCalls = %+v, %v", calls, err)
	}
}

func TestParseResponseInvalidAndTerminate(t *testing.T) {
	tools := testTools(t)
	p := Wrap(openai.New(), Markdown, tools)
	turn, err := p.ParseResponse(fakeprovider.ChatJSON(fakeprovider.Reply{Text: `{"tool": "deploy", "parameters": {}}`}))
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Calls) != 0 || !strings.Contains(turn.Invalid, `unknown tool "deploy"`) || !strings.Contains(turn.Invalid, "```bash") {
		t.Errorf("invalid turn = %+v", turn)
	}
	turn, _ = p.ParseResponse(fakeprovider.ChatJSON(fakeprovider.Reply{Text: `{"tool": "list_directory", "parameters": {}, "terminate": true}`}))
	if !turn.Terminate || len(turn.Calls) != 1 {
		t.Errorf("terminate turn = %+v", turn)
	}
}

// A model that calls natively anyway keeps its calls.
func TestNativeCallsPassThrough(t *testing.T) {
	p := Wrap(openai.New(), JSON, testTools(t))
	turn, err := p.ParseResponse(fakeprovider.ChatJSON(fakeprovider.Reply{Text: `{"tool": "shell"}`,
		Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", "{}")}}))
	if err != nil || len(turn.Calls) != 1 || turn.Calls[0].ID != "c1" {
		t.Errorf("turn = %+v, %v", turn, err)
	}
}

func TestFormatToolResultsIsOneUserMessage(t *testing.T) {
	results := []providers.ToolResult{{ID: "a", Name: "read_file", Content: "x"}, {ID: "b", Name: "shell", Content: "y", IsError: true}}
	for _, inner := range []providers.Protocol{openai.New(), anthropic.New(), ollama.New()} {
		p := Wrap(inner, JSON, testTools(t))
		msgs, err := p.FormatToolResults(results)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := inner.UserMessage(FormatResults(results))
		if len(msgs) != 1 || !bytes.Equal(msgs[0], want) {
			t.Errorf("%s: FormatToolResults = %s, want %s", inner.Name(), msgs, want)
		}
	}
	if msgs, _ := Wrap(openai.New(), JSON, nil).FormatToolResults(nil); msgs != nil {
		t.Errorf("no results gave %s", msgs)
	}
}

// Streamed text is held back (a call may start anywhere in it) and read
// once the stream is done.
func TestStreamHoldsTextBack(t *testing.T) {
	p := Wrap(openai.New(), JSON, testTools(t))
	var shown strings.Builder
	body := fakeprovider.ChatStream(fakeprovider.Reply{Text: callReply})
	turn, err := providers.ReadStream(bytes.NewReader(body), p.Framing(), p.NewStream(), func(s string) { shown.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if shown.Len() != 0 {
		t.Errorf("streamed %q", shown.String())
	}
	if len(turn.Calls) != 1 || turn.Text != "Reading it." {
		t.Errorf("turn = %+v", turn)
	}
	if calls, err := p.ParseToolCalls(body); err != nil || len(calls) != 1 {
		t.Errorf("ParseToolCalls(stream) = %+v, %v", calls, err)
	}
	cut := body[:len(body)/2]
	if _, err := providers.ReadStream(bytes.NewReader(cut), p.Framing(), p.NewStream(), nil); err == nil {
		t.Error("a cut stream read without error")
	}
}

func TestWrapperDelegates(t *testing.T) {
	inner := openai.New()
	p := Wrap(inner, Markdown, nil)
	if p.Name() != "openai" || p.Inner() != providers.Protocol(inner) || p.Form() != Markdown ||
		p.Endpoint("http://x", "m", false) != inner.Endpoint("http://x", "m", false) || p.Framing() != inner.Framing() {
		t.Error("wrapper does not delegate")
	}
}
