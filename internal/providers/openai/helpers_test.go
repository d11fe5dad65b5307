package openai

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
	"github.com/tidwall/gjson"
)

// responseFixtures lists every recorded response of this protocol under
// testdata/<provider dir>/: whole bodies (*.json but not *.request.json)
// and streams (*.sse), as paths relative to testdata.
func responseFixtures(t testing.TB) []string {
	t.Helper()
	var names []string
	for _, pattern := range []string{"*/*.json", "*/*.sse"} {
		m, err := filepath.Glob(filepath.Join("testdata", pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel("testdata", p)
			rel = filepath.ToSlash(rel)
			if strings.HasSuffix(rel, ".request.json") || strings.HasPrefix(rel, "golden/") {
				continue
			}
			names = append(names, rel)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatal("no response fixtures in testdata")
	}
	return names
}

// requestFixtures lists every recorded request body, relative to testdata.
func requestFixtures(t testing.TB) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join("testdata", "*", "*.request.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range m {
		rel, _ := filepath.Rel("testdata", p)
		names = append(names, filepath.ToSlash(rel))
	}
	sort.Strings(names)
	return names
}

// requestFrom reads a recorded request body back into a providers.Request:
// a leading system message with string content becomes System, the other
// messages stay raw, tools go through the standardized parser (which drops
// the client's "strict" flag).
func requestFrom(t testing.TB, body []byte) providers.Request {
	t.Helper()
	if !gjson.ValidBytes(body) {
		t.Fatalf("recorded request is not JSON")
	}
	root := gjson.ParseBytes(body)
	r := providers.Request{
		Model:     root.Get("model").String(),
		Stream:    root.Get("stream").Bool(),
		MaxTokens: int(root.Get("max_tokens").Int()),
	}
	msgs := root.Get("messages").Array()
	if len(msgs) > 0 && msgs[0].Get("role").String() == "system" && msgs[0].Get("content").Type == gjson.String {
		r.System = msgs[0].Get("content").String()
		msgs = msgs[1:]
	}
	for _, m := range msgs {
		r.Messages = append(r.Messages, json.RawMessage(m.Raw))
	}
	if tools := root.Get("tools"); tools.IsArray() && len(tools.Array()) > 0 {
		parsed, err := providers.ParseTools([]byte(tools.Raw))
		if err != nil {
			t.Fatalf("recorded tools: %v", err)
		}
		r.Tools = parsed
	}
	return r
}

// clientChoices are request fields the recorded clients set and ask does
// not (or sets differently): tool_choice, OpenRouter's usage.include,
// max_completion_tokens, n, web_search_options, and an explicit
// "stream":false (ask leaves stream out when not streaming).
var clientChoices = []string{"tool_choice", "usage", "max_completion_tokens", "n", "web_search_options"}

// comparable decodes a request body and removes what the clients chose
// differently from ask: the clientChoices fields and each tool's
// function.strict flag.
func comparable(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("request is not a JSON object: %v\n%s", err, body)
	}
	for _, k := range clientChoices {
		delete(m, k)
	}
	if s, ok := m["stream"].(bool); ok && !s {
		delete(m, "stream")
	}
	if tools, ok := m["tools"].([]any); ok {
		for _, tool := range tools {
			if fn, ok := tool.(map[string]any)["function"].(map[string]any); ok {
				delete(fn, "strict")
			}
		}
	}
	return m
}

// messagesOf returns the decoded messages array of a comparable request.
func messagesOf(m map[string]any) []any {
	msgs, _ := m["messages"].([]any)
	return msgs
}

// sameValue fails the test unless a and b are the same JSON value.
func sameValue(t testing.TB, what string, got, want any) {
	t.Helper()
	providertest.SameJSON(t, what, providertest.Marshal(t, got), providertest.Marshal(t, want))
}

// parseFixture parses a response fixture as ask would replay it.
func parseFixture(t testing.TB, name string) (*providers.Turn, error) {
	t.Helper()
	return providers.ParseBody(New(), providertest.Read(t, name))
}
