package stage

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/jsonpos"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// fixture is a recorded reply that the CLI's stage scripts use too.
func fixture(t *testing.T, name string) Input {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "cmd", "ask", "testdata", "stages", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return Input{Name: name, Data: b}
}

func provider(t *testing.T, name string) (catalog.Provider, providers.Protocol) {
	t.Helper()
	prov, err := catalog.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	proto, err := prov.NewProtocol()
	if err != nil {
		t.Fatal(err)
	}
	return prov, proto
}

func isUsage(err error) bool {
	kind, ok := fault.KindOf(err)
	return ok && kind == fault.Usage
}

// A reply is read as a run reads it, and each fault has the kind that
// gives its exit code: bad input is Usage (2), an error the provider
// recorded keeps its own, named for the provider.
func TestReadReply(t *testing.T) {
	t.Parallel()
	prov, proto := provider(t, "openai")
	turn, err := ReadReply(fixture(t, "openai-chat/fantasy-gpt4o-tool.json"), prov, proto)
	if err != nil || len(turn.Calls) != 1 || turn.Calls[0].Name != "weather" {
		t.Fatalf("a recorded tool call: %+v, %v", turn, err)
	}

	_, err = ReadReply(fixture(t, "openai-chat/pydantic-error-400-system-role.json"), prov, proto)
	var apiErr *providers.APIError
	if !errors.As(err, &apiErr) || apiErr.Provider != "openai" || isUsage(err) {
		t.Errorf("a recorded error: %v; want the provider's own error, named openai", err)
	}
	if !strings.Contains(err.Error(), "holds an error from the provider") {
		t.Errorf("a recorded error: %q does not say where it came from", err)
	}

	var pos *jsonpos.Error
	_, err = ReadReply(Input{Name: "reply.json", Data: []byte("\n  [1, 2]")}, prov, proto)
	if !errors.As(err, &pos) || !strings.HasPrefix(err.Error(), "reply.json: line 2, column 3: ") {
		t.Errorf("a JSON value that is no reply: %v; want its position", err)
	}

	cmd, cmdProto := provider(t, "command")
	if _, err := ReadReply(Input{Name: "stdin", Data: []byte(" \n\x1b[2K")}, cmd, cmdProto); !isUsage(err) || !strings.Contains(err.Error(), "stdin is empty") {
		t.Errorf("an empty command reply: %v; want a usage error", err)
	}
}

// The next request holds the reply's turn and the results of its calls;
// a turn that calls tools is not appended without them.
func TestAppend(t *testing.T) {
	t.Parallel()
	prov, proto := provider(t, "openai")
	request := Input{Name: "request.json", Data: []byte(`{"model":"m","messages":[{"role":"user","content":"weather?"}]}`)}
	if err := Appendable(prov, proto, request); err != nil {
		t.Fatal(err)
	}
	turn, err := ReadReply(fixture(t, "openai-chat/fantasy-gpt4o-tool.json"), prov, proto)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Append(proto, "", request, turn, nil, false); !isUsage(err) || !strings.Contains(err.Error(), "--results") {
		t.Errorf("calls without results: %v; want a usage error naming --results", err)
	}
	results := []providers.ToolResult{{ID: turn.Calls[0].ID, Name: "weather", Content: "sunny"}}
	next, err := Append(proto, "", request, turn, results, true)
	if err != nil {
		t.Fatal(err)
	}
	msgs := gjson.GetBytes(next, "messages")
	if roles := msgs.Get("#.role").String(); roles != `["user","assistant","tool"]` {
		t.Errorf("roles %s, want user, assistant, tool: %s", roles, next)
	}
	if got := msgs.Get("2.content").String(); got != "sunny" || msgs.Get("2.tool_call_id").String() != turn.Calls[0].ID {
		t.Errorf("the tool message %s", msgs.Get("2").Raw)
	}
	if gjson.GetBytes(next, "model").String() != "m" {
		t.Errorf("the rest of the request changed: %s", next)
	}

	cmd, cmdProto := provider(t, "command")
	if err := Appendable(cmd, cmdProto, request); !isUsage(err) || !strings.Contains(err.Error(), "local program") {
		t.Errorf("a local program: %v; want a usage error", err)
	}
}

// The providers are listed with whether a key is set, never the key, and
// their base URLs without a password.
func TestProviders(t *testing.T) {
	t.Parallel()
	env := map[string]string{"OPENAI_API_KEY": "sk-secret-1", "OLLAMA_HOST": "http://user:hunter2@gpu:11434"}
	rows := Providers(func(k string) string { return env[k] })
	if len(rows) != len(catalog.All()) {
		t.Fatalf("%d rows for %d providers", len(rows), len(catalog.All()))
	}
	byName := map[string]ProviderInfo{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	if !byName["openai"].KeySet || byName["anthropic"].KeySet {
		t.Errorf("key set: openai %v, anthropic %v", byName["openai"].KeySet, byName["anthropic"].KeySet)
	}
	out, _ := json.Marshal(rows)
	for _, secret := range []string{"sk-secret-1", "hunter2"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("the list shows %q: %s", secret, out)
		}
	}
	if !strings.Contains(byName["ollama"].BaseURL, "gpu:11434") {
		t.Errorf("ollama's base URL %q", byName["ollama"].BaseURL)
	}
}
