package catalog

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// The last step a limit allows withholds the tools by each protocol's own
// means (DESIGN §5); every other request offers them as before.
func TestLastStepWithholdsTheTools(t *testing.T) {
	t.Parallel()
	tool := providers.Tool{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}
	for _, tt := range []struct {
		protocol string
		// withheld is a gjson path and the value it has on the last step;
		// on other steps the path is absent.
		path, value string
		// toolsStay: the tools are still declared on the last step.
		toolsStay bool
		toolsPath string
	}{
		{"openai", "tool_choice", "none", true, "tools"},
		{"responses", "tool_choice", "none", true, "tools"},
		{"anthropic", "tool_choice.type", "none", true, "tools"},
		{"gemini", "toolConfig.functionCallingConfig.mode", "NONE", true, "tools"},
		{"ollama", "tools", "", false, "tools"},
	} {
		t.Run(tt.protocol, func(t *testing.T) {
			t.Parallel()
			p, err := NewProtocol(tt.protocol)
			if err != nil {
				t.Fatal(err)
			}
			user, err := p.UserMessage("what is in go.mod?")
			if err != nil {
				t.Fatal(err)
			}
			r := providers.Request{Model: "m", System: "be brief", Messages: []json.RawMessage{user}, Tools: []providers.Tool{tool}}
			every, err := p.BuildRequest(r)
			if err != nil {
				t.Fatal(err)
			}
			r.NoToolCalls = true
			last, err := p.BuildRequest(r)
			if err != nil {
				t.Fatal(err)
			}
			if tt.value != "" {
				if got := gjson.GetBytes(every, tt.path); got.Exists() {
					t.Errorf("an ordinary step has %s = %s", tt.path, got.Raw)
				}
				if got := gjson.GetBytes(last, tt.path).String(); got != tt.value {
					t.Errorf("the last step has %s = %q, want %q", tt.path, got, tt.value)
				}
			}
			if !gjson.GetBytes(every, tt.toolsPath).Exists() {
				t.Errorf("an ordinary step declares no tools: %s", every)
			}
			if got := gjson.GetBytes(last, tt.toolsPath).Exists(); got != tt.toolsStay {
				t.Errorf("the last step declares tools: %v, want %v", got, tt.toolsStay)
			}
			providertest.Golden(t, "last-step-"+tt.protocol, last)
		})
	}
}

// With no tools there is nothing to withhold: the request is the same.
func TestLastStepWithoutTools(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"openai", "responses", "anthropic", "gemini", "ollama"} {
		p, _ := NewProtocol(name)
		user, _ := p.UserMessage("hi")
		r := providers.Request{Model: "m", Messages: []json.RawMessage{user}}
		a, _ := p.BuildRequest(r)
		r.NoToolCalls = true
		b, _ := p.BuildRequest(r)
		if string(a) != string(b) {
			t.Errorf("%s: NoToolCalls without tools changed the request:\n%s\n%s", name, a, b)
		}
	}
}
