package openai

import (
	"errors"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// sse frames data payloads as a text/event-stream body.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: ")
		b.WriteString(e)
		b.WriteString("\n\n")
	}
	return b.String()
}

// chunk wraps a delta (and an optional finish_reason) in a chunk.
func chunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
}

func TestStream(t *testing.T) {
	const usage = `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"cached_tokens":4,"completion_tokens_details":{"reasoning_tokens":2}}}`
	tests := []struct {
		name     string
		body     string
		deltas   string // text returned by Add, joined with |
		calls    []providers.ToolCall
		echo     string // expected Turn.Messages[0], as JSON
		text     string
		reason   string
		usage    providers.Usage
		stop     string
		wantErr  error
		apiError string
	}{
		{
			name:   "text deltas are shown as they come",
			body:   sse(chunk(`{"role":"assistant","content":""}`, ""), chunk(`{"content":"Hel"}`, ""), chunk(`{"content":"lo"}`, ""), chunk(`{}`, "stop"), usage, "[DONE]"),
			deltas: "Hel|lo",
			text:   "Hello",
			echo:   `{"role":"assistant","content":"Hello"}`,
			usage:  providers.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 4, ReasoningTokens: 2, TotalTokens: 15},
			stop:   "stop",
		},
		{
			name: "index -1 is 0, missing index is the position, arguments null or whole",
			body: sse(
				chunk(`{"tool_calls":[{"index":-1,"id":"a","type":"function","function":{"name":"first","arguments":null}}]}`, ""),
				chunk(`{"tool_calls":[{"index":-1,"function":{"arguments":"{\"x\":"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}`, ""),
				chunk(`{"tool_calls":[{"id":"b","function":{"name":"zero","arguments":null}},{"id":"c","function":{"name":"whole","arguments":"{\"y\":2}"}}]}`, ""),
				chunk(`{}`, "tool_calls"), chunk(`{}`, "tool_calls"), "[DONE]"),
			// The entries without index sit at positions 0 and 1: position
			// 0 extends call 0 (id replaced by the non-empty "b").
			calls: []providers.ToolCall{{ID: "b", Name: "firstzero", Arguments: `{"x":1}`}, {ID: "c", Name: "whole", Arguments: `{"y":2}`}},
			echo:  `{"role":"assistant","tool_calls":[{"id":"b","type":"function","function":{"name":"firstzero","arguments":"{\"x\":1}"}},{"id":"c","type":"function","function":{"name":"whole","arguments":"{\"y\":2}"}}]}`,
			stop:  "tool_calls",
		},
		{
			name: "a signature sent first as \"\" is completed later, and a later \"\" or null empties nothing",
			body: sse(
				chunk(`{"reasoning_details":[{"type":"reasoning.text","text":"thin","signature":"","format":"anthropic-claude-v1","index":0}],"thought_signature":"ts"}`, ""),
				chunk(`{"reasoning_details":[{"type":"reasoning.text","text":"k","signature":"sig","format":null,"index":0}],"thought_signature":""}`, ""),
				chunk(`{"content":"ok","thought_signature":null}`, "stop"), "[DONE]"),
			deltas: "ok",
			text:   "ok",
			reason: "think",
			echo:   `{"role":"assistant","content":"ok","reasoning_details":[{"type":"reasoning.text","text":"think","signature":"sig","format":"anthropic-claude-v1","index":0}],"thought_signature":"ts"}`,
			stop:   "stop",
		},
		{
			name:  "empty arguments become {}",
			body:  sse(chunk(`{"tool_calls":[{"index":0,"id":"n","type":"function","function":{"name":"now","arguments":""}}]}`, "tool_calls"), "[DONE]"),
			calls: []providers.ToolCall{{ID: "n", Name: "now", Arguments: "{}"}},
			echo:  `{"role":"assistant","tool_calls":[{"id":"n","type":"function","function":{"name":"now","arguments":"{}"}}]}`,
			stop:  "tool_calls",
		},
		{
			name:   "reasoning_content is kept even when empty",
			body:   sse(chunk(`{"role":"assistant","content":null,"reasoning_content":""}`, ""), chunk(`{"content":"ok","reasoning_content":null}`, "stop"), "[DONE]"),
			deltas: "ok",
			text:   "ok",
			echo:   `{"role":"assistant","content":"ok","reasoning_content":""}`,
			stop:   "stop",
		},
		{
			name: "reasoning_details merged by index and type, signature arriving late",
			body: sse(
				chunk(`{"reasoning":"Let","reasoning_details":[{"type":"reasoning.text","text":"Let","format":"anthropic-claude-v1","index":0}]}`, ""),
				chunk(`{"reasoning":" me","reasoning_details":[{"type":"reasoning.text","text":" me","format":"anthropic-claude-v1","index":0}]}`, ""),
				chunk(`{"reasoning_details":[{"type":"reasoning.text","signature":"sig==","format":"anthropic-claude-v1","index":0}]}`, ""),
				chunk(`{"reasoning_details":[{"type":"reasoning.encrypted","data":"AAA","id":"t1","format":"google-gemini-v1","index":1}]}`, ""),
				chunk(`{"reasoning_details":[]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"id":"t1","type":"function","function":{"name":"f","arguments":"{}"}}]}`, "tool_calls"),
				"[DONE]"),
			calls:  []providers.ToolCall{{ID: "t1", Name: "f", Arguments: "{}"}},
			reason: "Let me",
			echo: `{"role":"assistant","reasoning":"Let me","reasoning_details":[` +
				`{"type":"reasoning.text","text":"Let me","format":"anthropic-claude-v1","index":0,"signature":"sig=="},` +
				`{"type":"reasoning.encrypted","data":"AAA","id":"t1","format":"google-gemini-v1","index":1}],` +
				`"tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{}"}}]}`,
			stop: "tool_calls",
		},
		{
			name:  "unknown provider state is echoed",
			body:  sse(chunk(`{"thought_signature":"abc","tool_calls":[{"index":0,"id":"g","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"xyz"}}}]}`, "tool_calls"), "[DONE]"),
			calls: []providers.ToolCall{{ID: "g", Name: "f", Arguments: "{}"}},
			echo:  `{"role":"assistant","thought_signature":"abc","tool_calls":[{"id":"g","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"xyz"}}}]}`,
			stop:  "tool_calls",
		},
		{
			name:   "finish_reason without [DONE] is accepted",
			body:   sse(chunk(`{"content":"hi"}`, "stop")),
			deltas: "hi",
			text:   "hi",
			echo:   `{"role":"assistant","content":"hi"}`,
			stop:   "stop",
		},
		{
			name:    "cut before finish_reason",
			body:    sse(chunk(`{"content":"hi"}`, ""), chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x"}}]}`, "")),
			deltas:  "hi",
			wantErr: providers.ErrStreamCut,
		},
		{
			name:    "empty stream",
			body:    ": keep-alive\n\n",
			wantErr: providers.ErrStreamCut,
		},
		{
			name:    "event that is not JSON",
			body:    sse(chunk(`{"content":"a"}`, ""), `{"choices":[`),
			deltas:  "a",
			wantErr: providers.ErrMalformed,
		},
		{
			name:    "streamed call without a name",
			body:    sse(chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]}`, "tool_calls"), "[DONE]"),
			wantErr: providers.ErrMalformed,
		},
		{
			name:     "error chunk",
			body:     sse(chunk(`{"content":"par"}`, ""), `{"error":{"message":"upstream overloaded","code":502},"choices":[]}`, "[DONE]"),
			deltas:   "par",
			apiError: "upstream overloaded",
		},
		{
			name:   "events after [DONE] are not read",
			body:   sse(chunk(`{"content":"a"}`, "stop"), "[DONE]", chunk(`{"content":"b"}`, ""), `{"error":{"message":"late"}}`),
			deltas: "a",
			text:   "a",
			echo:   `{"role":"assistant","content":"a"}`,
			stop:   "stop",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var deltas []string
			turn, err := providers.ReadStream(strings.NewReader(tt.body), providers.SSE, New().NewStream(), func(s string) { deltas = append(deltas, s) })
			if got := strings.Join(deltas, "|"); got != tt.deltas {
				t.Errorf("deltas = %q; want %q", got, tt.deltas)
			}
			switch {
			case tt.apiError != "":
				var apiErr *providers.APIError
				if !errors.As(err, &apiErr) || apiErr.Message != tt.apiError {
					t.Fatalf("error = %v; want an *APIError %q", err, tt.apiError)
				}
				return
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v; want %v", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if turn.Text != tt.text || turn.Reasoning != tt.reason || turn.StopReason != tt.stop || turn.Usage != tt.usage {
				t.Errorf("turn = text %q reasoning %q stop %q usage %+v; want %q %q %q %+v", turn.Text, turn.Reasoning, turn.StopReason, turn.Usage, tt.text, tt.reason, tt.stop, tt.usage)
			}
			if len(turn.Calls) != len(tt.calls) {
				t.Fatalf("calls = %+v; want %+v", turn.Calls, tt.calls)
			}
			for i := range tt.calls {
				if turn.Calls[i] != tt.calls[i] {
					t.Errorf("call %d = %+v; want %+v", i, turn.Calls[i], tt.calls[i])
				}
			}
			providertest.SameJSON(t, "echo", turn.Messages[0], []byte(tt.echo))
		})
	}
}

// TestStreamDone checks Done and that Turn can tell a cut stream even when
// it is fed event by event, as the caller does.
func TestStreamDone(t *testing.T) {
	s := New().NewStream()
	if _, err := s.Add(providers.Event{Data: []byte(chunk(`{"content":"x"}`, ""))}); err != nil {
		t.Fatal(err)
	}
	if s.Done() {
		t.Error("Done() before [DONE]")
	}
	if _, err := s.Turn(); !errors.Is(err, providers.ErrStreamCut) {
		t.Errorf("Turn() error = %v; want ErrStreamCut", err)
	}
	if _, err := s.Add(providers.Event{Data: []byte("[DONE]")}); err != nil {
		t.Fatal(err)
	}
	if !s.Done() {
		t.Error("Done() false after [DONE]")
	}
	turn, err := s.Turn()
	if err != nil || turn.Text != "x" {
		t.Errorf("Turn() = %+v, %v; want text x", turn, err)
	}
}

// TestKimiStreamReasoningDetails checks the merged reasoning_details of a
// long OpenRouter stream against the concatenated plain reasoning deltas.
func TestKimiStreamReasoningDetails(t *testing.T) {
	turn, err := parseFixture(t, "openrouter/fantasy-kimi-multi-tool-stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	echo := string(turn.Messages[0])
	if n := strings.Count(echo, `"type":"reasoning.text"`); n != 1 {
		t.Errorf("echo has %d reasoning.text entries; want 1 merged entry", n)
	}
	if !strings.HasPrefix(turn.Reasoning, " The user wants me to add and multiply") || !strings.Contains(echo, `"text":`+string(providers.Quote(turn.Reasoning))) {
		t.Errorf("merged reasoning text does not match the reasoning deltas:\n%s", echo)
	}
}
