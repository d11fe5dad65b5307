package main

import (
	"strings"
	"testing"
)

// TestStagesRejectMalformedInput feeds every stage input it cannot use:
// each must exit 2 (bad input) with one line naming what is wrong and,
// for JSON that does not parse, where.
func TestStagesRejectMalformedInput(t *testing.T) {
	t.Parallel()
	const tool = `{"type":"function","function":{"name":"x"}}`
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string // the whole message after "ask: "
	}{
		// format-tools
		{"tools: trailing comma", []string{"provider", "format-tools", "-p", "openai"}, "[\n  " + tool + ",\n]",
			"stdin: invalid JSON at line 3, column 1: invalid character ']' looking for beginning of value"},
		{"tools: truncated", []string{"provider", "format-tools", "-p", "anthropic"}, "\n\n[" + tool,
			"stdin: invalid JSON at line 3, column 45: unexpected end of JSON input"},
		{"tools: text after the value", []string{"provider", "format-tools", "-p", "gemini"}, "[]\nx",
			"stdin: invalid JSON at line 2, column 1: invalid character 'x' after top-level value"},
		{"tools: wrong type", []string{"provider", "format-tools", "-p", "openai"}, "[\n {\"type\":\"function\",\"function\":{\"name\":5}}]",
			"stdin: line 2, column 40: function.name is a JSON number, expected a string"},
		{"tools: an object, not an array", []string{"provider", "format-tools", "-p", "openai"}, tool,
			"stdin: line 1, column 1: the value is a JSON object, expected an array"},
		{"tools: no name", []string{"provider", "format-tools", "-p", "openai"}, `[{"type":"function","function":{}}]`,
			`stdin: line 1, column 2: entry 0: "function.name" is missing or empty: each tool needs {"type": "function", "function": {"name", "description", "parameters"}}`},
		{"tools: second entry of the wrong type", []string{"provider", "format-tools", "-p", "openai"}, "[\n  " + tool + ",\n  {\"type\": \"tool\", \"function\": {\"name\": \"y\"}}\n]",
			`stdin: line 3, column 12: entry 1: "type" is "tool", expected "function"`},
		{"tools: empty", []string{"provider", "format-tools", "-p", "openai"}, " \n", "stdin is empty: expected JSON"},
		{"tools: unknown provider", []string{"provider", "format-tools", "-p", "nope"}, "[]", `unknown provider "nope"`},
		{"tools: a command model has none", []string{"provider", "format-tools", "-p", "command"}, "[" + tool + "]",
			"format tools for command: command: a command model has no native tools; use the text tool protocol"},

		// parse-tool-calls
		{"body: syntax", []string{"provider", "parse-tool-calls", "-p", "openai"}, "{\n  \"choices\": [\n    {\"message\": }\n  ]\n}",
			"stdin: invalid JSON at line 3, column 17: invalid character '}' looking for beginning of value"},
		{"body: not a response", []string{"provider", "parse-tool-calls", "-p", "openai"}, `{"id": "x"}`,
			"stdin: line 1, column 1: malformed response: openai: response has no choices: expected the response body or stream of openai, as `ask provider send -p openai` prints it"},
		{"body: an empty object after blank lines", []string{"provider", "parse-tool-calls", "-p", "openai", "--tool-protocol", "json"}, "\n\n  {}",
			"stdin: line 3, column 3: malformed response: openai: response has no choices"},
		{"body: standardized calls given as a response", []string{"provider", "parse-tool-calls", "-p", "anthropic"}, `[{"id":"c","name":"x","arguments":"{}"}]`,
			"stdin: line 1, column 1: "},
		{"body: syntax, text protocol", []string{"provider", "parse-tool-calls", "-p", "openai", "--tool-protocol", "json"}, "{\"choices\": [\n  {\"message\": }]}",
			"stdin: invalid JSON at line 2, column 15: invalid character '}' looking for beginning of value"},
		{"command: nothing printed", []string{"provider", "parse-tool-calls", "-p", "command"}, "\x1b[K \n\t\n",
			"stdin is empty: expected the text the command model printed"},
		{"command: native", []string{"provider", "parse-tool-calls", "-p", "command", "--tool-protocol", "native"}, "hi",
			"--tool-protocol native: command has no native tool calling; use json or markdown"},
		{"parse: unknown tool protocol", []string{"provider", "parse-tool-calls", "-p", "openai", "--tool-protocol", "xml"}, "{}",
			`--tool-protocol "xml": choose auto, native, json or markdown`},
		{"parse: text protocol, unknown mode", []string{"provider", "parse-tool-calls", "-p", "command", "--mode", "yolo"}, "hi",
			`--mode "yolo": choose ask, plan or agent`},
		{"sse: broken event", []string{"provider", "parse-tool-calls", "-p", "openai"},
			"data: {\"choices\":[]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"hi\"}]}\n\ndata: [DONE]\n\n",
			"stdin: invalid JSON in the stream at line 3, column 44: invalid character ']' after object key:value pair"},
		{"sse: event split over data lines", []string{"provider", "parse-tool-calls", "-p", "anthropic"},
			"event: message_start\ndata: {\"type\":\ndata: \"message_start\",,\n\n",
			"stdin: invalid JSON in the stream at line 3, column 23: invalid character ',' looking for beginning of object key string"},
		{"sse: cut short", []string{"provider", "parse-tool-calls", "-p", "openai"},
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n",
			"stdin: openai: stream ended early: no finish_reason and no [DONE]"},
		{"ndjson: broken line", []string{"provider", "parse-tool-calls", "-p", "ollama"},
			"{\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"done\":false}\n{\"done\":tru}\n",
			"stdin: invalid JSON in the stream at line 2, column 12: invalid character '}' in literal true (expecting 'e')"},
		{"ndjson: SSE given to ollama", []string{"provider", "parse-tool-calls", "-p", "ollama"}, "data: {}\n\n",
			"stdin: invalid JSON at line 1, column 1: invalid character 'd' looking for beginning of value"},

		// format-tool-result
		{"results: syntax", []string{"provider", "format-tool-result", "-p", "anthropic"}, `[{"id":"a","content":"x" "is_error":false}]`,
			"stdin: invalid JSON at line 1, column 26: invalid character '\"' after object key:value pair"},
		{"results: no id", []string{"provider", "format-tool-result", "-p", "openai"}, `[{"name":"x","content":"y"}]`,
			`stdin: line 1, column 2: entry 0: "id" is missing or empty: each result needs the id of the call it answers`},
		{"results: second id empty", []string{"provider", "format-tool-result", "-p", "command"}, "[{\"id\":\"a\"},\n  {\"id\":\"\", \"content\":\"x\"}]",
			`stdin: line 2, column 3: entry 1: "id" is missing or empty`},
		{"results: unknown tool protocol", []string{"provider", "format-tool-result", "-p", "openai", "--tool-protocol", "xml"}, `[]`,
			`--tool-protocol "xml": choose auto, native, json or markdown`},
		{"results: native for a command model", []string{"provider", "format-tool-result", "-p", "command", "--tool-protocol", "native"}, `[]`,
			"--tool-protocol native: command has no native tool calling; use json or markdown"},
		{"results: is_error a string", []string{"provider", "format-tool-result", "-p", "openai"}, "[{\"id\":\"a\",\n\"is_error\":\"no\"}]",
			"stdin: line 2, column 12: is_error is a JSON string, expected true or false"},

		// send checks the body before it needs a key or a network
		{"send: syntax", []string{"provider", "send", "-p", "openai"}, "{\"model\": \"gpt-4o\",\n \"messages\": [}",
			"stdin: invalid JSON at line 2, column 15: invalid character '}' looking for beginning of value"},
		{"send: null", []string{"provider", "send", "-p", "openai"}, "null",
			"stdin: line 1, column 1: the request body is JSON null, expected a JSON object (ask provider request prints one)"},
		{"send: an array", []string{"provider", "send", "-p", "openai"}, "\n [1,2]",
			"stdin: line 2, column 2: the request body is a JSON array, expected a JSON object"},
		{"send: a string", []string{"provider", "send", "-p", "anthropic"}, `"hi"`,
			"stdin: line 1, column 1: the request body is a JSON string, expected a JSON object"},
		{"send: a command model", []string{"provider", "send", "-p", "command"}, "{}",
			"command runs a local program, not an HTTP API: there is nothing to send a body to"},

		// tools run
		{"calls: syntax", []string{"tools", "run"}, "[{\"id\":\"c1\",\"name\":\"read_file\",\n\"arguments\":{\"path\":\"x\"}]",
			"stdin: invalid JSON at line 2, column 25: invalid character ']' after object key:value pair"},
		// An object is taken for its JSON text, as people type calls by hand.
		{"calls: arguments must be a string or an object", []string{"tools", "run"}, "[{\"id\":\"c1\",\"name\":\"read_file\",\n\"arguments\":[1]}]",
			"stdin: line 2, column 13: arguments is a JSON array, expected a string"},
		{"calls: no name", []string{"tools", "run"}, `[{"id":"c1","arguments":"{}"}]`,
			`stdin: line 1, column 2: entry 0: "name" is missing or empty: each call needs {"id", "name", "arguments"}`},
		{"calls: a null entry", []string{"tools", "run"}, "[{\"id\":\"c1\",\"name\":\"read_file\",\"arguments\":\"{}\"},\n  null]",
			`stdin: line 2, column 3: entry 1: "name" is missing or empty`},

		// arguments and flags
		{"two inputs", []string{"provider", "format-tools", "a.json", "b.json"}, "[]",
			"provider format-tools reads one input, got 2 arguments: pipe the JSON in, or name one file"},
		{"a missing file", []string{"provider", "parse-tool-calls", "nope.json"}, "",
			"read input: open "},
		{"request: no prompt", []string{"provider", "request", "-p", "openai"}, "",
			`no prompt: give it as arguments (ask "why does make fail?") or on stdin`},
		{"request: bad mode", []string{"provider", "request", "--mode", "yolo", "x"}, "",
			`--mode "yolo": choose ask, plan or agent`},
		{"request: a command model", []string{"provider", "request", "-p", "command", "--command", "cat", "x"}, "",
			"command runs a local program, not an HTTP API: it has no request body"},
		{"list: arguments", []string{"provider", "list", "openai"}, "", "provider list takes no arguments"},
		{"show: unknown tool", []string{"tools", "show", "--mode", "ask", "write_file"}, "",
			`no tool "write_file" is offered in mode ask with these flags: choose one of read_file, list_directory, search`},
		{"unknown provider stage", []string{"provider", "bogus"}, "", `provider: unknown command "bogus": choose list, format-tools, parse-tool-calls, format-tool-result, request, send, append`},
		{"unknown tools command", []string{"tools", "lst"}, "", `tools: unknown command "lst": choose list, show, run`},
		{"show: no name", []string{"tools", "show"}, "", "tools show takes one tool name (ask tools list shows them)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAsk(t, askEnv{stdin: tt.stdin}, tt.args...)
			if r.code != exitUsage {
				t.Errorf("exit %d, want 2; stderr: %s", r.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			msg, ok := strings.CutPrefix(r.stderr, "ask: ")
			if !ok || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("stderr is not one ask: line: %q", r.stderr)
			}
			if !strings.HasPrefix(msg, tt.want) {
				t.Errorf("message\n  %s\nwant it to start with\n  %s", strings.TrimSpace(msg), tt.want)
			}
		})
	}
}

// TestStagesDoNotWaitOnATerminal: a stage with nothing piped in says so
// instead of waiting for someone to type JSON.
func TestStagesDoNotWaitOnATerminal(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"provider", "format-tools"}, {"provider", "parse-tool-calls"}, {"provider", "format-tool-result"},
		{"provider", "send"}, {"tools", "run"},
	} {
		r := runAsk(t, askEnv{}, args...) // no stdin: a terminal
		want := "ask: " + strings.Join(args, " ") + " reads JSON on stdin: pipe it in"
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", args, r.code, r.stderr, want)
		}
	}
}
