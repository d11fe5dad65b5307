package gemini

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// checkTurn holds the invariants of any parse: a turn comes with no error and
// an error with no turn; errors are of the kinds the contract names; calls
// have names, ids and JSON arguments; the echoed content is valid JSON whose
// functionCall parts are the calls, in order, and whose ids are the model's.
func checkTurn(t *testing.T, what string, turn *providers.Turn, err error) {
	t.Helper()
	if !providertest.Outcome(t, what, turn, err) {
		return
	}
	var echoed []gjson.Result
	for _, m := range turn.Messages {
		if !json.Valid(m) {
			t.Fatalf("%s: echoed content is not valid JSON: %s", what, m)
		}
		for _, p := range gjson.GetBytes(m, "parts").Array() {
			if fc := p.Get("functionCall"); fc.Exists() {
				echoed = append(echoed, fc)
			}
		}
	}
	if len(echoed) != len(turn.Calls) {
		t.Fatalf("%s: %d calls for %d echoed functionCall parts", what, len(turn.Calls), len(echoed))
	}
	for i, c := range turn.Calls {
		if c.Name == "" || c.ID == "" {
			t.Errorf("%s: call %d has name %q, id %q", what, i, c.Name, c.ID)
		}
		if !json.Valid([]byte(c.Arguments)) {
			t.Errorf("%s: call %d arguments are not JSON: %q", what, i, c.Arguments)
		}
		if got := echoed[i].Get("name").String(); got != c.Name {
			t.Errorf("%s: call %d is %q, echoed part names %q", what, i, c.Name, got)
		}
		if id := echoed[i].Get("id").String(); id != "" && id != c.ID || id == "" && !isGeneratedID(c.ID) {
			t.Errorf("%s: call %d id %q, echoed id %q", what, i, c.ID, id)
		}
	}
}

// splitSeeds adds every recorded body with a few random cut points.
func splitSeeds(f *testing.F, names []string) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range names {
		body := providertest.Read(f, name)
		f.Add(body, uint32(len(body)/2))
		for range 3 {
			f.Add(body, rng.Uint32N(uint32(len(body)+1)))
		}
	}
}

// FuzzParseToolCalls feeds every recorded body, of every form, whole and
// cut at a point: ParseToolCalls must agree with ParseBody and never
// panic.
func FuzzParseToolCalls(f *testing.F) {
	var names []string
	for _, n := range append(providertest.Fixtures(f, ".json"), providertest.Fixtures(f, ".sse")...) {
		if !strings.HasSuffix(n, ".request.json") {
			names = append(names, n)
		}
	}
	splitSeeds(f, names)
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"x"}},{"functionCall":{"name":"y","args":null,"id":""}}]},"finishReason":"STOP"}]}`), uint32(0))
	f.Fuzz(func(t *testing.T, body []byte, cut uint32) {
		n := int(cut % uint32(len(body)+1))
		p := New()
		for _, b := range [][]byte{body, body[:n]} {
			turn, err := providers.ParseBody(p, b)
			checkTurn(t, "ParseBody", turn, err)
			calls, cerr := p.ParseToolCalls(b)
			if (err == nil) != (cerr == nil) {
				t.Fatalf("ParseBody error %v, ParseToolCalls error %v", err, cerr)
			}
			if err == nil {
				providertest.SameJSON(t, "calls", providertest.Marshal(t, calls), providertest.Marshal(t, turn.Calls))
			}
		}
	})
}

// FuzzStream feeds recorded streams, mutated, through the accumulator in two
// chunks split at a point, and truncated at that point.
func FuzzStream(f *testing.F) {
	splitSeeds(f, providertest.Fixtures(f, ".sse"))
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
			providertest.SameJSON(t, "split turn", providertest.Marshal(t, providertest.RecordTurn(split)), providertest.Marshal(t, providertest.RecordTurn(whole)))
		}

		cutTurn, errCut := read(bytes.NewReader(body[:n]))
		checkTurn(t, "truncated", cutTurn, errCut)
		// Without a finishReason a stream cannot succeed. (A \u escape could
		// spell the key without the literal text.)
		prefix := body[:n]
		if errCut == nil && !bytes.Contains(prefix, []byte("finishReason")) && !bytes.Contains(prefix, []byte(`\u`)) {
			t.Errorf("stream truncated at %d without a finishReason gave a turn", n)
		}
	})
}
