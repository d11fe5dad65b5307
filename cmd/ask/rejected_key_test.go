package main

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
)

// TestErrorBodiesSameInStagesAndRuns hands the same error body to a run,
// to `ask provider send` (both meet it with its HTTP status) and to `ask
// provider parse-tool-calls` (which sees only the body): all three must give
// the same exit code, 4 for a rejected key whatever the status, 3 otherwise.
func TestErrorBodiesSameInStagesAndRuns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, provider, keyEnv string
		status                 int
		body                   string
		want                   int
	}{
		{"openai rejected key", "openai", "OPENAI_API_KEY", 401,
			`{"error":{"message":"Incorrect API key provided: sk-abc***xyz.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, exitAuth},
		{"gemini rejected key is a 400", "gemini", "GEMINI_API_KEY", 400,
			`{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`, exitAuth},
		{"anthropic rejected key", "anthropic", "ANTHROPIC_API_KEY", 401,
			`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011"}`, exitAuth},
		{"openrouter rejected key", "openrouter", "OPENROUTER_API_KEY", 401,
			`{"error":{"message":"No auth credentials found","code":401}}`, exitAuth},
		{"responses rejected key", "openai-responses", "OPENAI_API_KEY", 401,
			`{"error":{"message":"Incorrect API key provided: sk-abc***xyz.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, exitAuth},
		{"ollama cloud rejected key", "ollama", "OLLAMA_API_KEY", 401, `{"error":"unauthorized"}`, exitAuth},
		{"openai bad request", "openai", "OPENAI_API_KEY", 400,
			readTestdata(t, "stages/fixtures/openai-chat/pydantic-error-400-system-role.json"), exitProvider},
		{"gemini not found", "gemini", "GEMINI_API_KEY", 404,
			readTestdata(t, "stages/fixtures/gemini/pydantic-error-404-not-found.json"), exitProvider},
		{"anthropic bad request", "anthropic", "ANTHROPIC_API_KEY", 400,
			readTestdata(t, "stages/fixtures/anthropic/pydantic-error-400-invalid-request.json"), exitProvider},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := func(srv *fakeprovider.Server) askEnv {
				return askEnv{server: srv, env: map[string]string{"ASK_PROVIDER": tt.provider, tt.keyEnv: "fake-test-not-a-real-key-0000"}}
			}
			reply := fakeprovider.Reply{Status: tt.status, Body: tt.body, ContentType: "application/json"}

			srv := fakeprovider.Start(reply)
			defer srv.Close()
			ran := runAsk(t, env(srv), "--no-stream", "--retries", "0", "what?")

			srv2 := fakeprovider.Start(reply)
			defer srv2.Close()
			e := env(srv2)
			e.stdin = `{}`
			sent := runAsk(t, e, "provider", "send", "--retries", "0")

			parsed := runAsk(t, askEnv{stdin: tt.body}, "provider", "parse-tool-calls", "-p", tt.provider)

			for what, r := range map[string]askResult{"a run": ran, "ask provider send": sent, "ask provider parse-tool-calls": parsed} {
				if r.code != tt.want {
					t.Errorf("%s exits %d, want %d; stderr: %s", what, r.code, tt.want, strings.TrimSpace(r.stderr))
				}
			}
		})
	}
}
