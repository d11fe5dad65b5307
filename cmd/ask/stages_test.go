package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/stage"
)

// The goldens of the stages: each stage's output over the standard inputs
// (testdata/stages/tools.json, results.json) for every wire protocol, and
// parse-tool-calls over every provider's recorded bodies and streams
// (testdata/stages/fixtures, see its PROVENANCE.md). Run with -update to
// rewrite them, then read the diff.

// fixtureProvider is the provider each fixture directory was recorded
// from; fixtureProtocol overrides it for the few recordings made on an
// endpoint of another wire protocol.
var fixtureProvider = map[string]string{
	"anthropic":           "anthropic",
	"deepseek":            "deepseek",
	"gemini":              "gemini",
	"local-openai-compat": "lmstudio",
	"moonshot-kimi":       "moonshot",
	"ollama":              "ollama",
	"openai-chat":         "openai",
	"openai-responses":    "openai-responses",
	"openrouter":          "openrouter",
}

var fixtureProtocol = map[string]string{
	"deepseek/pydantic-responses-api-function-tool-stream.sse":           "openai-responses", // api.deepseek.com/responses
	"deepseek/pydantic-responses-api-error-400-missing-tool-output.json": "openai-responses",
	"openrouter/llm-openrouter-responses-tool-stream.sse":                "openai-responses", // openrouter.ai/api/v1/responses
	"ollama/pydantic-openai-compat-v1-tool.json":                         "openai",           // ollama.com/v1/chat/completions
}

// protocolProviders has one provider per wire protocol.
var protocolProviders = []string{"openai", "openai-responses", "anthropic", "gemini", "ollama"}

// golden compares got (JSON) with testdata/stages/NAME.json, indented, or
// rewrites that file under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, bytes.TrimSpace(got), "", "  "); err != nil {
		t.Fatalf("%s: output is not JSON: %v\n%s", name, err, got)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", "stages", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/ask -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("%s differs from %s (go test -update rewrites it)\n got: %s\nwant: %s", name, path, pretty.Bytes(), want)
	}
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// failure is what a golden holds for a run that failed.
func failure(r askResult) []byte {
	b, _ := json.Marshal(map[string]any{"exit_code": r.code, "stderr": r.stderr, "stdout": r.stdout})
	return b
}

func TestFormatToolsGoldens(t *testing.T) {
	t.Parallel()
	tools := readTestdata(t, "stages/tools.json")
	for _, p := range protocolProviders {
		t.Run(p, func(t *testing.T) {
			r := runAsk(t, askEnv{stdin: tools}, "provider", "format-tools", "-p", p)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			golden(t, "format-tools/"+p, []byte(r.stdout))
		})
	}
}

func TestFormatToolResultGoldens(t *testing.T) {
	t.Parallel()
	results := readTestdata(t, "stages/results.json")
	for _, p := range append(protocolProviders, "command") {
		t.Run(p, func(t *testing.T) {
			r := runAsk(t, askEnv{stdin: results}, "provider", "format-tool-result", "-p", p)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			golden(t, "format-tool-result/"+p, []byte(r.stdout))
		})
	}
}

func TestParseToolCallsGoldens(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "stages", "fixtures", "*", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		rel := filepath.ToSlash(strings.TrimPrefix(f, filepath.Join("testdata", "stages", "fixtures")+string(filepath.Separator)))
		dir, base, _ := strings.Cut(rel, "/")
		prov := fixtureProvider[dir]
		if p, ok := fixtureProtocol[rel]; ok {
			prov = p
		}
		if prov == "" {
			t.Fatalf("%s: no provider for fixture directory %s", rel, dir)
		}
		name := "parse-tool-calls/" + dir + "/" + strings.TrimSuffix(base, filepath.Ext(base))
		if seen[name] {
			t.Fatalf("two fixtures share the golden %s", name)
		}
		seen[name] = true
		t.Run(rel, func(t *testing.T) {
			body := readTestdata(t, "stages/fixtures/"+rel)
			r := runAsk(t, askEnv{stdin: body}, "provider", "parse-tool-calls", "-p", prov, "--text")
			if r.code != 0 {
				// Recorded error responses keep the provider's exit code.
				if !strings.Contains(rel, "error") {
					t.Errorf("exit %d: %s", r.code, r.stderr)
				}
				golden(t, name, failure(r))
				return
			}
			golden(t, name, []byte(r.stdout))

			// Without --text the output is the calls alone, the same ones.
			var withText stage.ParsedReply
			if err := json.Unmarshal([]byte(r.stdout), &withText); err != nil {
				t.Fatal(err)
			}
			plain := runAsk(t, askEnv{stdin: body}, "provider", "parse-tool-calls", "-p", prov)
			calls, err := providers.ParseToolCallsJSON([]byte(plain.stdout))
			if plain.code != 0 || err != nil {
				t.Fatalf("without --text: exit %d, %v: %s", plain.code, err, plain.stderr)
			}
			if len(calls) != len(withText.ToolCalls) {
				t.Errorf("without --text: %d calls, with --text %d", len(calls), len(withText.ToolCalls))
			}
			for i := range calls {
				if calls[i] != withText.ToolCalls[i] {
					t.Errorf("call %d: %+v without --text, %+v with it", i, calls[i], withText.ToolCalls[i])
				}
			}
		})
	}
}

// TestRequestGoldens pins the body `ask provider request` prints for every
// HTTP provider, which is the body the loop sends for its first step.
func TestRequestGoldens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{"openrouter", []string{"-p", "openrouter"}},
		{"openai", []string{"-p", "openai"}},
		{"openai-responses", []string{"-p", "openai-responses"}},
		{"anthropic", []string{"-p", "anthropic"}},
		{"gemini", []string{"-p", "gemini"}},
		{"ollama", []string{"-p", "ollama"}},
		{"deepseek", []string{"-p", "deepseek"}},
		{"moonshot", []string{"-p", "moonshot"}},
		{"lmstudio", []string{"-p", "lmstudio", "-m", "qwen3-8b"}},
		{"anthropic-ask-mode-no-stream", []string{"-p", "anthropic", "--mode", "ask", "--no-stream", "--max-tokens", "500", "-s", "Answer in French."}},
		{"ollama-json-tool-protocol", []string{"-p", "ollama", "--tool-protocol", "json", "--mode", "plan"}},
		{"openrouter-claude", []string{"-p", "openrouter", "-m", "anthropic/claude-sonnet-4.5"}},
		{"anthropic-no-cache", []string{"-p", "anthropic", "--no-cache"}},
		{"openai-no-cache", []string{"-p", "openai", "--no-cache"}},
		{"openai-no-tools-schema", []string{"-p", "openai", "--no-tools", "--schema", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`}},
		// --temperature and --reasoning, as each provider's own fields.
		{"openai-knobs", []string{"-p", "openai", "-m", "gpt-5", "--temperature", "1", "--reasoning", "low", "--no-tools"}},
		{"openrouter-knobs", []string{"-p", "openrouter", "--temperature", "0.2", "--reasoning", "high", "--no-tools"}},
		{"responses-knobs", []string{"-p", "openai-responses", "-m", "gpt-5", "--reasoning", "medium", "--no-tools"}},
		{"anthropic-thinking", []string{"-p", "anthropic", "--reasoning", "high", "--max-tokens", "500", "--no-tools"}},
		{"gemini-2.5-knobs", []string{"-p", "gemini", "--reasoning", "low", "--temperature", "0.5", "--no-tools"}},
		{"gemini-3-knobs", []string{"-p", "gemini", "-m", "gemini-3-flash-preview", "--reasoning", "medium", "--no-tools"}},
		{"ollama-knobs", []string{"-p", "ollama", "--reasoning", "high", "--temperature", "0.7", "--no-tools"}},
		{"deepseek-knobs", []string{"-p", "deepseek", "--reasoning", "high", "--no-tools"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wd := t.TempDir()
			args := append([]string{"provider", "request"}, tt.args...)
			r := runAsk(t, askEnv{wd: wd}, append(args, "what is in go.mod?")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if r.stderr != "" {
				t.Errorf("stderr: %s", r.stderr)
			}
			golden(t, "request/"+tt.name, []byte(portable(r.stdout, wd)))
			// The goldens' prompt_cache_key looks like a credential but is
			// derived from the prompt: "ask-" and half the SHA-256 of the
			// first message, which OpenAI uses to route a conversation's
			// requests to one cache.
			if key := gjson.Get(r.stdout, "prompt_cache_key"); key.Exists() {
				sum := sha256.Sum256([]byte(`{"role":"user","content":"what is in go.mod?"}`))
				if want := "ask-" + hex.EncodeToString(sum[:16]); key.String() != want {
					t.Errorf("prompt_cache_key %s, want %s, from the first message", key.Raw, want)
				}
			}
		})
	}
}

// portable replaces what differs between machines in a request body: the
// working directory and the OS named in the system prompt.
func portable(body, wd string) string {
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		body = strings.ReplaceAll(body, real, "/work")
	}
	body = strings.ReplaceAll(body, wd, "/work")
	return strings.ReplaceAll(body, "OS: "+runtime.GOOS+".", "OS: linux.")
}

// TestRequestIsWhatTheLoopSends compares `ask provider request` with the
// body the main command really sends for its first step, flag for flag.
func TestRequestIsWhatTheLoopSends(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{
		nil,
		{"--mode", "ask", "--no-stream", "--max-tokens", "300"},
		{"--safe", "-s", "Be brief.", "--deny-tool", "search"},
		{"--tool-protocol", "json"},
		{"--tool-protocol", "markdown", "--mode", "plan"},
		{"--no-tools", "--schema", `{"type":"object"}`},
		{"-m", "gpt-4.1", "--allow-tool", "shell:git status*"},
		{"--temperature", "0.3", "--reasoning", "medium"},
		{"--tool-protocol", "json", "--reasoning", "low"},
	} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			wd := t.TempDir()
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "{}"})
			defer srv.Close()
			args := append(append([]string{}, flags...), "what is in go.mod?")
			if r := runAsk(t, askEnv{server: srv, wd: wd}, args...); r.code != 0 {
				t.Fatalf("ask: exit %d: %s", r.code, r.stderr)
			}
			sent := srv.Requests()
			r := runAsk(t, askEnv{server: srv, wd: wd}, append([]string{"provider", "request"}, args...)...)
			if r.code != 0 {
				t.Fatalf("provider request: exit %d: %s", r.code, r.stderr)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, sent[0]); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(r.stdout); got != want.String() {
				t.Errorf("provider request printed\n%s\nthe loop sent\n%s", got, want.String())
			}
		})
	}
}

// TestParseToolCallsTextProtocolGoldens reads replies written under the
// text tool protocol (testdata/stages/textproto) in every wire protocol's
// body or stream, and a command model's printed text, as a run reads them.
func TestParseToolCallsTextProtocolGoldens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, provider string
		flags          []string
		wantNotes      int // lines on stderr: one per call left out
	}{
		{"openai.json", "openai", []string{"--tool-protocol", "json"}, 0},
		{"openai.sse", "openai", []string{"--tool-protocol", "json"}, 0},
		{"anthropic.json", "anthropic", []string{"--tool-protocol", "json"}, 1},
		{"gemini.json", "gemini", []string{"--tool-protocol", "markdown"}, 0}, // every form is read, whichever is taught
		{"ollama.ndjson", "ollama", []string{"--tool-protocol", "json"}, 0},
		{"openai-responses.json", "openai-responses", []string{"--tool-protocol", "json"}, 0},
		{"command.txt", "command", nil, 0}, // auto: json, the command provider has no native tools
		{"command-markdown.txt", "command", []string{"--tool-protocol", "markdown"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body := readTestdata(t, "stages/textproto/"+tt.file)
			args := append([]string{"provider", "parse-tool-calls", "-p", tt.provider}, tt.flags...)
			r := runAsk(t, askEnv{stdin: body, wd: t.TempDir()}, append(args, "--text")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			golden(t, "parse-tool-calls-text/"+strings.TrimSuffix(tt.file, filepath.Ext(tt.file))+"-"+filepath.Ext(tt.file)[1:], []byte(r.stdout))
			if n := strings.Count(r.stderr, "\n"); n != tt.wantNotes || n > 0 && !strings.Contains(r.stderr, "could not be read and is left out") {
				t.Errorf("stderr = %q, want %d notes of calls left out", r.stderr, tt.wantNotes)
			}
			var withText stage.ParsedReply
			if err := json.Unmarshal([]byte(r.stdout), &withText); err != nil {
				t.Fatal(err)
			}
			if len(withText.ToolCalls) == 0 {
				t.Error("no calls read")
			}
			plain := runAsk(t, askEnv{stdin: body, wd: t.TempDir()}, append(args, "-q")...)
			calls, err := providers.ParseToolCallsJSON([]byte(plain.stdout))
			if plain.code != 0 || err != nil || plain.stderr != "" {
				t.Fatalf("without --text, with -q: exit %d, %v, stderr %q", plain.code, err, plain.stderr)
			}
			if fmt.Sprint(calls) != fmt.Sprint(withText.ToolCalls) {
				t.Errorf("without --text: %+v, with it %+v", calls, withText.ToolCalls)
			}
		})
	}
}

// Without --tool-protocol, an HTTP provider's reply is read for native
// calls only: a call written in the text is text.
func TestParseToolCallsNativeIgnoresTextCalls(t *testing.T) {
	t.Parallel()
	body := readTestdata(t, "stages/textproto/openai.json")
	for _, flags := range [][]string{nil, {"--tool-protocol", "auto"}, {"--tool-protocol", "native"}} {
		r := runAsk(t, askEnv{stdin: body}, append([]string{"provider", "parse-tool-calls", "-p", "openai"}, flags...)...)
		if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want []", flags, r.code, r.stdout, r.stderr)
		}
	}
}

// The text protocol reads calls of the tools the mode and tool flags
// declare, as `ask provider request` declared them.
func TestParseToolCallsTextProtocolFollowsTheMode(t *testing.T) {
	t.Parallel()
	reply := `{"tool": "write_file", "parameters": {"path": "a", "content": "b"}}`
	agent := runAsk(t, askEnv{stdin: reply}, "provider", "parse-tool-calls", "-p", "command", "--text")
	ask := runAsk(t, askEnv{stdin: reply}, "provider", "parse-tool-calls", "-p", "command", "--mode", "ask", "--text")
	if agent.code != 0 || !strings.Contains(agent.stdout, `"name":"write_file"`) {
		t.Errorf("agent mode: exit %d, %s %s", agent.code, agent.stdout, agent.stderr)
	}
	if ask.code != 0 || !strings.Contains(ask.stdout, `"tool_calls":[]`) || !strings.Contains(ask.stdout, `unknown tool \"write_file\"; the tools are: read_file, list_directory, search`) {
		t.Errorf("ask mode: exit %d, %s %s", ask.code, ask.stdout, ask.stderr)
	}
}

// TestFormatToolResultTextProtocolGoldens pins the user message a run
// sends back under a text tool protocol, for every wire protocol.
func TestFormatToolResultTextProtocolGoldens(t *testing.T) {
	t.Parallel()
	results := readTestdata(t, "stages/results.json")
	for _, p := range append(protocolProviders, "command") {
		t.Run(p, func(t *testing.T) {
			r := runAsk(t, askEnv{stdin: results}, "provider", "format-tool-result", "-p", p, "--tool-protocol", "json")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			golden(t, "format-tool-result/text-"+p, []byte(r.stdout))
			// The results read the same whichever form was taught.
			md := runAsk(t, askEnv{stdin: results}, "provider", "format-tool-result", "-p", p, "--tool-protocol", "markdown")
			if md.code != 0 || md.stdout != r.stdout {
				t.Errorf("markdown: exit %d, %s; json gave %s", md.code, md.stdout, r.stdout)
			}
		})
	}
	// native (and auto, for a provider that has it) is the provider's own
	// format, as without the flag.
	for _, flag := range []string{"native", "auto"} {
		r := runAsk(t, askEnv{stdin: results}, "provider", "format-tool-result", "-p", "anthropic", "--tool-protocol", flag)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", flag, r.code, r.stderr)
		}
		golden(t, "format-tool-result/anthropic", []byte(r.stdout))
	}
}
