package responses

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// chunkReader hands out its data in pieces of n bytes, so events and lines
// arrive split at arbitrary points.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(r.n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// checkTurn asserts what must hold of any turn this package returns: calls
// have ids and names, each call is echoed under its id, every echoed item is
// a JSON object, no function_call echo carries an item id, and every echoed
// reasoning item has encrypted_content and a following item.
func checkTurn(t *testing.T, turn *providers.Turn) {
	t.Helper()
	echoed := map[string]bool{}
	for i, m := range turn.Messages {
		if !gjson.ValidBytes(m) || !gjson.ParseBytes(m).IsObject() {
			t.Fatalf("message %d is not a JSON object: %s", i, m)
		}
		item := gjson.ParseBytes(m)
		switch item.Get("type").String() {
		case "function_call":
			if item.Get("id").Exists() {
				t.Errorf("function_call echo keeps its item id: %s", m)
			}
			echoed[item.Get("call_id").String()] = true
		case "reasoning":
			if item.Get("encrypted_content").String() == "" {
				t.Errorf("reasoning echoed without encrypted_content: %s", m)
			}
			if i == len(turn.Messages)-1 {
				t.Errorf("reasoning echoed without a following item: %s", m)
			}
		}
	}
	for i, c := range turn.Calls {
		if c.ID == "" || c.Name == "" {
			t.Errorf("call %d has an empty id or name: %+v", i, c)
		}
		if !echoed[c.ID] {
			t.Errorf("call %d (%s) is not echoed under its id", i, c.ID)
		}
	}
}

// FuzzStream feeds recorded streams, truncated and delivered in pieces,
// through the accumulator. It must never panic; a stream that ends before
// its terminal event must fail; a turn that comes out must be sound.
func FuzzStream(f *testing.F) {
	for _, name := range providertest.Fixtures(f, ".sse") {
		body := providertest.Read(f, name)
		f.Add(body, uint32(len(body)), uint8(64))
		f.Add(body, uint32(len(body)/2), uint8(1))
		f.Add(body, uint32(len(body)-3), uint8(255))
	}
	f.Add(events(`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","name":"f","arguments":""}}`, completed), uint32(1<<20), uint8(5))
	f.Add(events(`{"type":"response.function_call_arguments.delta","output_index":9,"item_id":"x","delta":"{"}`, completed), uint32(1<<20), uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, cut uint32, chunk uint8) {
		if int(cut) < len(body) {
			body = body[:cut]
		}
		r := &chunkReader{data: body, n: int(chunk) + 1}
		turn, err := providers.ReadStream(r, providers.SSE, New().NewStream(), nil)
		if err != nil {
			return
		}
		if !bytes.Contains(body, []byte("response.completed")) && !bytes.Contains(body, []byte("response.incomplete")) {
			t.Fatalf("a stream without a terminal event gave a turn: %q", body)
		}
		checkTurn(t, turn)
	})
}

// FuzzParseResponse feeds recorded response bodies, truncated or mutated,
// to ParseResponse and ParseToolCalls.
func FuzzParseResponse(f *testing.F) {
	for _, name := range responseFixtures(f) {
		if strings.HasSuffix(name, ".json") {
			f.Add(providertest.Read(f, name))
		}
	}
	f.Add(response(rsEnc, msg, fcA, rsPlain, fcB, rsEnc))
	f.Add(response(`{"type":"function_call","name":"f","arguments":{"a":1}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p := New()
		turn, err := p.ParseResponse(body)
		calls, callsErr := p.ParseToolCalls(body)
		if err != nil {
			return
		}
		checkTurn(t, turn)
		if callsErr == nil && len(calls) != len(turn.Calls) {
			t.Errorf("ParseToolCalls gave %d calls, ParseResponse %d", len(calls), len(turn.Calls))
		}
	})
}
