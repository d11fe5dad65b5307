package ollama

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
	"github.com/tidwall/gjson"
)

// recordedRequest turns a recorded request body back into the Request that
// would render it: the leading system message becomes System, the rest stays
// raw history. fantasy's top-level max_tokens (not an Ollama field) becomes
// MaxTokens, which this package sends as options.num_predict.
func recordedRequest(t testing.TB, name string) providers.Request {
	t.Helper()
	body := providertest.Read(t, name)
	if !gjson.ValidBytes(body) {
		t.Fatalf("%s: not JSON", name)
	}
	root := gjson.ParseBytes(body)
	r := providers.Request{
		Model:     root.Get("model").String(),
		Stream:    root.Get("stream").Bool(),
		MaxTokens: int(root.Get("max_tokens").Int()),
	}
	for i, m := range root.Get("messages").Array() {
		if i == 0 && m.Get("role").String() == "system" {
			r.System = m.Get("content").String()
			continue
		}
		r.Messages = append(r.Messages, json.RawMessage(m.Raw))
	}
	if tools := root.Get("tools"); tools.Exists() {
		parsed, err := providers.ParseTools([]byte(tools.Raw))
		if err != nil {
			t.Fatalf("%s: tools: %v", name, err)
		}
		r.Tools = parsed
	}
	return r
}

// turnRecord is what the goldens hold for one reply.
type turnRecord struct {
	Text       string               `json:"text"`
	Reasoning  string               `json:"reasoning"`
	Calls      []providers.ToolCall `json:"calls"`
	Usage      providers.Usage      `json:"usage"`
	StopReason string               `json:"stop_reason"`
	Messages   []json.RawMessage    `json:"messages"`
	// Deltas is the text shown while streaming, fragment by fragment.
	Deltas []string `json:"deltas,omitempty"`
}

func record(turn *providers.Turn, deltas []string) turnRecord {
	return turnRecord{
		Text: turn.Text, Reasoning: turn.Reasoning, Calls: turn.Calls, Usage: turn.Usage,
		StopReason: turn.StopReason, Messages: turn.Messages, Deltas: deltas,
	}
}

// ndjson joins lines into a stream body.
func ndjson(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// checkTurn holds for every turn this package returns, whatever the input:
// calls have names and ids, the echo is one valid assistant message, and the
// echo carries the very ids the loop will answer.
func checkTurn(t *testing.T, turn *providers.Turn) {
	t.Helper()
	if len(turn.Messages) != 1 {
		t.Fatalf("Messages has %d items, want 1", len(turn.Messages))
	}
	echo := turn.Messages[0]
	if !json.Valid(echo) {
		t.Fatalf("echo is not valid JSON: %s", echo)
	}
	if role := gjson.GetBytes(echo, "role").String(); role != "assistant" {
		t.Errorf("echo role = %q, want assistant", role)
	}
	if c := gjson.GetBytes(echo, "content"); c.Type != gjson.String {
		t.Errorf("echo content = %s, want a string (the spec requires it)", c.Raw)
	}
	ids := gjson.GetBytes(echo, "tool_calls.#.id").Array()
	if len(ids) != len(turn.Calls) {
		t.Fatalf("echo has %d calls, Calls has %d", len(ids), len(turn.Calls))
	}
	for i, c := range turn.Calls {
		if c.Name == "" || c.ID == "" {
			t.Errorf("call %d: name %q id %q, want both non-empty", i, c.Name, c.ID)
		}
		if ids[i].String() != c.ID {
			t.Errorf("call %d: echo id %q, Calls id %q", i, ids[i].String(), c.ID)
		}
		if args := gjson.GetBytes(echo, "tool_calls."+strconv.Itoa(i)+".function.arguments"); !args.IsObject() {
			t.Errorf("call %d: echoed arguments %s, want an object", i, args.Raw)
		}
	}
}

// expectedError reports whether err is one of the failures the contract
// allows: a malformed body, a cut stream or an API error.
func expectedError(err error) bool {
	var apiErr *providers.APIError
	return errors.Is(err, providers.ErrMalformed) || errors.Is(err, providers.ErrStreamCut) || errors.As(err, &apiErr)
}

// chunkReader hands out its data n bytes at a time, so that lines arrive in
// pieces the way they do from a socket.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := min(r.n, len(p), len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}
