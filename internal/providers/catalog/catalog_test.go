package catalog

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// Every row builds the protocol it names, and NewProtocol finds each
// protocol by that name.
func TestRowsBuildTheirProtocol(t *testing.T) {
	t.Parallel()
	for _, row := range All() {
		p, err := row.NewProtocol()
		if err != nil {
			t.Fatalf("%s: %v", row.Name, err)
		}
		if p.Name() != row.Protocol {
			t.Errorf("%s builds the %s protocol, but names %s", row.Name, p.Name(), row.Protocol)
		}
		byName, err := NewProtocol(row.Protocol)
		if err != nil || byName.Name() != row.Protocol {
			t.Errorf("NewProtocol(%q) = %v, %v", row.Protocol, byName, err)
		}
	}
	if _, err := NewProtocol("nope"); err == nil {
		t.Error("an unknown protocol was built")
	}
	if _, err := (Provider{Name: "bare"}).NewProtocol(); err == nil {
		t.Error("a row without a constructor built a protocol")
	}
}

// A row's dialect reaches its requests: OpenRouter's reasoning object,
// and no answer schema in the request where the provider refuses one.
func TestRowsDialect(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		provider, path string
		exists         bool
	}{
		{"openai", "reasoning_effort", true},
		{"openrouter", "reasoning.effort", true},
		{"openrouter", "reasoning_effort", false},
		{"openai", "response_format.json_schema.schema", true},
		{"deepseek", "response_format", false},
		{"deepseek", "reasoning_effort", true},
	}
	for _, tt := range tests {
		row, err := Lookup(tt.provider)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := row.NewProtocol()
		user, _ := p.UserMessage("hi")
		body, err := p.BuildRequest(providers.Request{Model: "m", Messages: []json.RawMessage{user}, Reasoning: "low", Schema: schema})
		if err != nil {
			t.Fatalf("%s: %v", tt.provider, err)
		}
		if got := gjson.GetBytes(body, tt.path).Exists(); got != tt.exists {
			t.Errorf("%s: %s in the request: %v, want %v\n%s", tt.provider, tt.path, got, tt.exists, body)
		}
	}
}

// Only a provider whose key is optional answers without one.
func TestNeedsKey(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{"openai": true, "anthropic": true, "ollama": false, "lmstudio": false, "command": false} {
		row, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := row.NeedsKey(); got != want {
			t.Errorf("%s.NeedsKey() = %v, want %v", name, got, want)
		}
	}
}

// Exactly one row is the default, and it is Ollama's (DESIGN §3), which
// needs no key.
func TestDefault(t *testing.T) {
	t.Parallel()
	n := 0
	for _, p := range All() {
		if p.Default {
			n++
		}
	}
	if d := Default(); n != 1 || d.Name != "ollama" || d.NeedsKey() {
		t.Errorf("%d default rows; Default() = %s, needs a key: %v", n, d.Name, d.NeedsKey())
	}
	if p, err := Select("", "", func(string) string { return "" }); err != nil || p.Name != "ollama" {
		t.Errorf("Select with nothing set = %s, %v", p.Name, err)
	}
}
