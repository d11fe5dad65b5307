package anthropic

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// FuzzParseToolCalls feeds recorded replies, JSON documents and whole
// streams alike, cut at a random point, to ParseToolCalls: what `ask
// provider parse-tool-calls` and replays read. It must not panic, may fail
// only in the ways the contract names, and must agree with ParseBody.
func FuzzParseToolCalls(f *testing.F) {
	for _, suffix := range []string{".json", ".sse"} {
		for _, name := range providertest.Fixtures(f, suffix) {
			if !strings.HasSuffix(name, ".request.json") {
				body := providertest.Read(f, name)
				f.Add(body, uint32(len(body)))
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, cut uint32) {
		body = body[:int(cut%uint32(len(body)+1))]
		p := New()
		calls, err := p.ParseToolCalls(body)
		turn, turnErr := providers.ParseBody(p, body)
		if (err == nil) != (turnErr == nil) {
			t.Fatalf("ParseToolCalls error %v, ParseBody error %v", err, turnErr)
		}
		if err != nil {
			var apiErr *providers.APIError
			if !errors.Is(err, providers.ErrMalformed) && !errors.Is(err, providers.ErrStreamCut) && !errors.As(err, &apiErr) {
				t.Fatalf("unexpected kind of error: %v", err)
			}
			return
		}
		if !slices.Equal(calls, turn.Calls) {
			t.Fatalf("ParseToolCalls %+v, ParseBody %+v", calls, turn.Calls)
		}
		for i, c := range calls {
			if c.Name == "" || c.ID == "" {
				t.Errorf("call %d: name %q id %q", i, c.Name, c.ID)
			}
		}
	})
}
