package term

import (
	"testing"

	"github.com/ask-cli/ask/internal/records"
)

// Retries and denials are noted always, requests and tool calls only when
// verbose, and a model's arguments cannot redraw the terminal.
func TestNoteLine(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	tests := []struct {
		name    string
		ev      records.Event
		verbose bool
		want    string
	}{
		{"a retry", records.Event{Type: records.TypeRetry, Attempt: 2, DelayMS: 1500, Error: "429 Too Many Requests"}, false,
			"retry 2 in 1.5s: 429 Too Many Requests"},
		{"a request, quietly", records.Event{Type: records.TypeRequest, Step: 1, URL: "http://127.0.0.1/v1/chat/completions", Body: []byte("{}")}, false, ""},
		{"a request, verbose", records.Event{Type: records.TypeRequest, Step: 1, URL: "http://127.0.0.1/v1/chat/completions", Body: []byte("{}")}, true,
			"step 1: POST http://127.0.0.1/v1/chat/completions (2 bytes)"},
		{"a tool call, verbose", records.Event{Type: records.TypeToolStarted, Step: 2, Name: "shell", Arguments: "{\"command\":\"ls\r\u001b[2K\"}"}, true,
			`step 2: shell {"command":"ls \u001b[2K"}`},
		{"a tool call, quietly", records.Event{Type: records.TypeToolStarted, Step: 2, Name: "shell", Arguments: "{}"}, false, ""},
		{"a failed tool, verbose", records.Event{Type: records.TypeToolFinished, Step: 2, Name: "shell", IsError: true, Content: "exit 1"}, true,
			"step 2: shell failed: exit 1"},
		{"a tool that worked", records.Event{Type: records.TypeToolFinished, Step: 2, Name: "shell", Content: "ok"}, true, ""},
		{"a denial", records.Event{Type: records.TypeToolDenied, Step: 3, Name: "shell", Reason: "the user declined this call"}, false,
			"step 3: shell denied: the user declined this call"},
		{"a deferral", records.Event{Type: records.TypeToolDeferred, Step: 1, ID: "c1", Name: "shell", Reason: "--defer-tool shell matches it"}, false,
			"step 1: shell deferred (call c1): --defer-tool shell matches it"},
		{"a refused connection", records.Event{Type: records.TypeNetwork, Step: 4, Host: "evil.example\u001b]52;c;x", Port: 443, Allowed: &no}, false,
			`step 4: network: evil.example\u001b]52;c;x:443 refused (not an --allow-host host, or not port 80 or 443)`},
		{"an allowed connection, quietly", records.Event{Type: records.TypeNetwork, Step: 4, Host: "proxy.golang.org", Port: 443, Allowed: &yes}, false, ""},
		{"an allowed connection, verbose", records.Event{Type: records.TypeNetwork, Step: 4, Host: "proxy.golang.org", Port: 443, Allowed: &yes}, true,
			"step 4: network: proxy.golang.org:443"},
		{"a compaction", records.Event{Type: records.TypeContextCompacted, Step: 9, Compaction: &records.Compaction{Trigger: "auto", Window: 8000, BeforeTokens: 6600, AfterTokens: 3300, Pruned: 5, Summarised: 12}}, false,
			"compacted the conversation to fit the model's 8000-token window: 6600 → 3300 tokens (5 tool results pruned, 12 steps summarised)"},
		{"a compaction that cut a long result", records.Event{Type: records.TypeContextCompacted, Step: 31, Compaction: &records.Compaction{Trigger: "overflow", Window: 8000, BeforeTokens: 11500, AfterTokens: 5100, Pruned: 3, Cut: 1}}, false,
			"compacted the conversation to fit the model's 8000-token window, after the provider answered that it was too long: 11500 → 5100 tokens (3 tool results pruned, 1 long tool result cut)"},
	}
	for _, tt := range tests {
		if got := NoteLine(tt.ev, tt.verbose); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
