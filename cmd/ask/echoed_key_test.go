package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// echoKey has characters JSON escapes, so that its escaped forms differ
// from it, and a mark to search every output for.
const echoKey = `fake-test-KEY"with/quote-ECHOMARK`

// uEscaped spells every character of s as \u00xx.
func uEscaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\u%04x`, s[i])
	}
	return b.String()
}

// leakedKey reports whether out holds the mark in any spelling: as it is,
// or \u-escaped, however many backslashes precede each escape.
func leakedKey(out string) bool {
	flat := strings.ToLower(strings.ReplaceAll(out, `\`, ""))
	return strings.Contains(flat, "echomark") || strings.Contains(flat, strings.ReplaceAll(uEscaped("ECHOMARK"), `\`, ""))
}

// leakContext is the part of a leaking line around the first spelling
// of the mark, for the failure message.
func leakContext(line string) string {
	for _, mark := range []string{"ECHOMARK", "u0045u0043u0048u004f", "u0045u0043u0048u004F"} {
		flat := strings.ReplaceAll(line, `\`, "")
		if i := strings.Index(flat, mark); i >= 0 {
			return "…" + flat[max(0, i-200):min(len(flat), i+60)] + "… (backslashes dropped)"
		}
	}
	return line
}

// A hostile provider echoes the key back in every form it can: in response
// headers (Www-Authenticate, Location), in the model's text (as it is and
// \u-escaped), in a tool call's arguments, JSON-escaped and \u-escaped in
// an error body and in an error inside a stream. The key shows in no
// output: not stdout (--events, --json), not stderr (-v), not the
// transcript, not the last run's file, not `ask provider send`'s stderr.
func TestEchoedKeyNeverShows(t *testing.T) {
	t.Parallel()
	echoHeaders := http.Header{
		"Www-Authenticate": {`Bearer realm="api", error="invalid_token", token="` + echoKey + `"`},
		"Location":         {"https://elsewhere.example/login?key=" + echoKey},
	}
	args := `{"path":` + string(providers.Quote(echoKey)) + `,"note":"` + uEscaped(echoKey) + `"}`
	// Each echo is whole within one stream event: redaction is by
	// content, and cannot join a key a provider deals out in pieces.
	chunk := func(delta string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n"
	}
	toolStream := chunk(`{"role":"assistant","content":`+string(providers.Quote("your key is "+echoKey))+`}`) +
		chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":`+string(providers.Quote(args))+`}}]}`) +
		`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
		"data: [DONE]\n\n"
	toolTurn := fakeprovider.Reply{Header: echoHeaders, Body: toolStream}
	toolTurnPlain := fakeprovider.Reply{Header: echoHeaders, Body: string(fakeprovider.ChatJSON(fakeprovider.Reply{
		Text: "your key is " + echoKey, Calls: []providers.ToolCall{fakeprovider.Call("c1", "read_file", args)}}))}
	escapedAnswer := `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop",` +
		`"message":{"role":"assistant","content":"escaped: ` + uEscaped(echoKey) + `"}}]}`
	errorBody := `{"error":{"message":"invalid key ` + strings.Trim(string(providers.Quote(echoKey)), `"`) +
		` (` + uEscaped(echoKey) + `)","type":"invalid_request_error"}}`
	streamError := "data: {\"error\":{\"message\":\"bad key " + uEscaped(echoKey) + "\",\"type\":\"server_error\"}}\n\n"

	runs := []struct {
		name     string
		replies  []fakeprovider.Reply
		args     []string
		wantCode int
	}{
		{"stream with events", []fakeprovider.Reply{toolTurn, {Body: escapedAnswer}}, []string{"--events"}, 0},
		{"plain with json", []fakeprovider.Reply{toolTurnPlain, {Body: escapedAnswer}}, []string{"--json", "--no-stream"}, 0},
		{"error body with json", []fakeprovider.Reply{{Status: 400, Header: echoHeaders, Body: errorBody}}, []string{"--json"}, 3},
		{"error in a stream with events", []fakeprovider.Reply{{Header: echoHeaders, Body: streamError}}, []string{"--events"}, 3},
	}
	for _, tt := range runs {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(tt.replies...)
			defer srv.Close()
			state := t.TempDir()
			transcript := filepath.Join(t.TempDir(), "run.jsonl")
			args := append([]string{"-v", "--transcript", transcript}, tt.args...)
			r := runAsk(t, askEnv{server: srv, env: map[string]string{"OPENAI_API_KEY": echoKey, "XDG_STATE_HOME": state}},
				append(args, "what is my key?")...)
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.wantCode, r.stderr)
			}
			if !sentKey(srv, echoKey) {
				t.Fatal("the key never reached the server, so the test proves nothing")
			}
			outputs := map[string]string{"stdout": r.stdout, "stderr": r.stderr}
			for k, v := range readTree(t, state) {
				outputs[k] = v
			}
			for k, v := range readTree(t, filepath.Dir(transcript)) {
				outputs[k] = v
			}
			if len(outputs) != 4 {
				t.Errorf("want stdout, stderr, the transcript and the last run's file; have %d outputs", len(outputs))
			}
			for name, s := range outputs {
				for _, line := range strings.Split(s, "\n") {
					if leakedKey(line) {
						t.Errorf("the key shows in %s:\n%s", name, leakContext(line))
					}
				}
			}
			if !strings.Contains(r.stdout+r.stderr, "[redacted]") {
				t.Errorf("nothing was redacted, so the provider's echo never reached an output:\nstdout %s\nstderr %s", r.stdout, r.stderr)
			}
		})
	}

	t.Run("send with an error in the stream", func(t *testing.T) {
		t.Parallel()
		srv := fakeprovider.Start(fakeprovider.Reply{Header: echoHeaders, Body: streamError})
		defer srv.Close()
		r := runAsk(t, askEnv{server: srv, stdin: `{"model":"m","stream":true,"messages":[]}`,
			env: map[string]string{"OPENAI_API_KEY": echoKey, "XDG_STATE_HOME": t.TempDir()}},
			"provider", "send", "-p", "openai")
		if r.code != exitProvider {
			t.Fatalf("exit %d, want 3; stderr:\n%s", r.code, r.stderr)
		}
		for name, s := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
			if leakedKey(s) {
				t.Errorf("the key shows in %s:\n%s", name, leakContext(s))
			}
		}
	})
}
