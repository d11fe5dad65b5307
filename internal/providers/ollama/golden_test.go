package ollama

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers/providertest"
	"github.com/tidwall/gjson"
)

// TestGoldenResponses parses every recorded non-streamed reply. The
// non-stream fixtures were pretty-printed by the extractor, so the raw
// argument objects (kept byte for byte) carry its indentation; the server
// itself sends them compact, as the streams show.
func TestGoldenResponses(t *testing.T) {
	p := New()
	for _, name := range providertest.Fixtures(t, ".json") {
		if strings.HasSuffix(name, ".request.json") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			body := providertest.Read(t, name)
			turn, err := p.ParseResponse(body)
			if err != nil {
				t.Fatal(err)
			}
			checkTurn(t, turn)
			providertest.Golden(t, strings.TrimSuffix(name, ".json"), providertest.Marshal(t, record(turn, nil)))

			// Calls are decided by their presence: every recording says
			// done_reason "stop", with or without calls.
			recorded := gjson.GetBytes(body, "message.tool_calls.#").Int()
			if int64(len(turn.Calls)) != recorded {
				t.Errorf("%d calls, the body has %d", len(turn.Calls), recorded)
			}
			calls, err := p.ParseToolCalls(body)
			if err != nil {
				t.Fatal(err)
			}
			providertest.SameJSON(t, "ParseToolCalls", providertest.Marshal(t, calls), providertest.Marshal(t, providertest.CallsOrEmpty(turn.Calls)))
		})
	}
}

// TestGoldenStreams reads every recorded NDJSON stream.
func TestGoldenStreams(t *testing.T) {
	p := New()
	for _, name := range providertest.Fixtures(t, ".ndjson") {
		t.Run(name, func(t *testing.T) {
			body := providertest.Read(t, name)
			turn, deltas, err := providertest.Deltas(New(), body)
			if err != nil {
				t.Fatal(err)
			}
			checkTurn(t, turn)
			providertest.Golden(t, strings.TrimSuffix(name, ".ndjson"), providertest.Marshal(t, record(turn, deltas)))

			if got := strings.Join(deltas, ""); got != turn.Text {
				t.Errorf("deltas join to %q, Text is %q", got, turn.Text)
			}
			// ParseBody must see a stream, not a single document.
			calls, err := p.ParseToolCalls(body)
			if err != nil {
				t.Fatal(err)
			}
			providertest.SameJSON(t, "ParseToolCalls", providertest.Marshal(t, calls), providertest.Marshal(t, providertest.CallsOrEmpty(turn.Calls)))
			// The final line has the metrics and no calls; the calls came
			// whole in an earlier done:false line.
			if len(turn.Calls) != 1 {
				t.Errorf("%d calls, want the recording's 1", len(turn.Calls))
			}
			if turn.StopReason != "stop" {
				t.Errorf("StopReason = %q, want stop", turn.StopReason)
			}
		})
	}
}
