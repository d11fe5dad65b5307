package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// checkTurn holds the invariants of any parse: a turn comes with no error and
// an error with no turn; errors are of the kinds the contract names; calls
// have names and ids, and every id is on a tool_use block of the echoed
// message, which is valid JSON.
func checkTurn(t *testing.T, what string, turn *providers.Turn, err error) {
	t.Helper()
	if !providertest.Outcome(t, what, turn, err) {
		return
	}
	echoed := map[string]bool{}
	for _, m := range turn.Messages {
		if !json.Valid(m) {
			t.Fatalf("%s: echoed message is not valid JSON: %s", what, m)
		}
		for _, b := range gjson.GetBytes(m, "content").Array() {
			if b.Get("type").String() == "tool_use" {
				echoed[b.Get("id").String()] = true
			}
		}
	}
	for i, c := range turn.Calls {
		if c.Name == "" || c.ID == "" {
			t.Errorf("%s: call %d has name %q, id %q", what, i, c.Name, c.ID)
		}
		if !echoed[c.ID] {
			t.Errorf("%s: call id %q is not in the echoed message", what, c.ID)
		}
		if strings.TrimSpace(c.Arguments) == "" {
			t.Errorf("%s: call %d has empty arguments", what, i)
		}
	}
}

// FuzzStream feeds recorded streams, mutated, in two chunks split at a
// random point and truncated at that point.
func FuzzStream(f *testing.F) {
	for _, name := range providertest.Fixtures(f, ".sse") {
		body := providertest.Read(f, name)
		f.Add(body, uint32(len(body)/2))
		f.Add(body, uint32(len(body)-20))
	}
	f.Fuzz(func(t *testing.T, body []byte, cut uint32) {
		n := int(cut % uint32(len(body)+1))
		read := func(r io.Reader) (*providers.Turn, error) {
			return providers.ReadStream(r, providers.SSE, New().NewStream(), nil)
		}
		whole, errWhole := read(bytes.NewReader(body))
		checkTurn(t, "whole", whole, errWhole)
		split, errSplit := read(io.MultiReader(bytes.NewReader(body[:n]), bytes.NewReader(body[n:])))
		checkTurn(t, "split", split, errSplit)
		if (errWhole == nil) != (errSplit == nil) {
			t.Fatalf("whole: %v, split at %d: %v", errWhole, n, errSplit)
		}
		if errWhole == nil {
			providertest.SameJSON(t, "split calls", providertest.Marshal(t, split.Calls), providertest.Marshal(t, whole.Calls))
		}

		cutTurn, errCut := read(bytes.NewReader(body[:n]))
		checkTurn(t, "truncated", cutTurn, errCut)
		// Without its terminal event a stream cannot succeed. (A \u escape
		// could spell message_stop without the literal text.)
		prefix := body[:n]
		if errCut == nil && !bytes.Contains(prefix, []byte("message_stop")) && !bytes.Contains(prefix, []byte(`\u`)) {
			t.Errorf("stream truncated at %d without message_stop gave a turn", n)
		}
	})
}

// FuzzParseResponse feeds recorded JSON replies, mutated and truncated.
func FuzzParseResponse(f *testing.F) {
	for _, name := range providertest.Fixtures(f, ".json") {
		if strings.HasSuffix(name, ".request.json") {
			continue
		}
		body := providertest.Read(f, name)
		f.Add(body, uint32(len(body)/2))
	}
	f.Add([]byte(`{"content":[{"type":"tool_use","name":"x"},{"type":"tool_use","id":"","name":"y","input":null}]}`), uint32(0))
	f.Fuzz(func(t *testing.T, body []byte, cut uint32) {
		n := int(cut % uint32(len(body)+1))
		turn, err := New().ParseResponse(body)
		checkTurn(t, "whole", turn, err)
		turn, err = New().ParseResponse(body[:n])
		checkTurn(t, "truncated", turn, err)
	})
}
