package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
)

const citySchema = `{"type":"object","properties":{"city":{"type":"string"},"pop":{"type":"integer"}},"required":["city","pop"]}`

func TestSchemaFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "city.json"), []byte("{\n  \"type\": \"object\",\n  \"required\": [\"city\"]\n}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"type":"object",`), 0o644)
	os.WriteFile(filepath.Join(dir, "bad-type.json"), []byte(`{"type":"strin"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "true.json"), []byte("true\n"), 0o644)
	text := func(s string) fakeprovider.Reply { return fakeprovider.Reply{Text: s} }
	tests := []struct {
		name     string
		replies  []fakeprovider.Reply
		args     []string
		wantCode int
		wantOut  string
		wantErr  string // substring of stderr
		requests int
	}{
		{name: "valid the first time", replies: []fakeprovider.Reply{text(`{"city":"Oslo","pop":700000}`)},
			args: []string{"--schema", citySchema, "q"}, wantOut: `{"city":"Oslo","pop":700000}` + "\n", requests: 1},
		{name: "schema from a file, fenced answer", replies: []fakeprovider.Reply{text("```json\n{\"city\":\"Oslo\"}\n```")},
			args: []string{"--schema", "city.json", "q"}, wantOut: `{"city":"Oslo"}` + "\n", requests: 1},
		{name: "invalid then valid", replies: []fakeprovider.Reply{text(`{"city":"Oslo"}`), text(`{"city":"Oslo","pop":1}`)},
			args: []string{"--schema", citySchema, "q"}, wantOut: `{"city":"Oslo","pop":1}` + "\n", requests: 2},
		{name: "never valid", replies: []fakeprovider.Reply{text("Oslo"), text("Oslo!"), text(`{"city":"Oslo","pop":"many"}`)},
			args: []string{"--schema", citySchema, "q"}, wantCode: exitLimit, wantOut: "",
			wantErr: `stopped: the answer did not match the schema after 3 attempts: at /properties/pop: type: many has type "string", want "integer"`, requests: 3},
		{name: "unreadable schema file", args: []string{"--schema", "missing.json", "q"}, wantCode: exitUsage, wantErr: "--schema: open"},
		{name: "schema file is not JSON", args: []string{"--schema", "broken.json", "q"}, wantCode: exitUsage, wantErr: "--schema broken.json: not valid JSON"},
		{name: "not a JSON Schema", args: []string{"--schema", "bad-type.json", "q"}, wantCode: exitUsage,
			wantErr: "--schema bad-type.json: not a valid JSON Schema: at /type:"},
		{name: "inline schema is not JSON", args: []string{"--schema", `{"type":`, "q"}, wantCode: exitUsage, wantErr: "--schema: not valid JSON"},
		{name: "schema must be an object", args: []string{"--schema", "true.json", "q"}, wantCode: exitUsage, wantErr: "--schema true.json: a JSON Schema for the answer must be a JSON object"},
		{name: "inline schema with spaces", args: []string{"--schema", " {} ", "q"}, replies: []fakeprovider.Reply{text(`{}`)},
			wantOut: "{}\n", requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.Start(tt.replies...)
			defer srv.Close()
			r := runAsk(t, askEnv{server: srv, wd: dir}, tt.args...)
			if r.code != tt.wantCode {
				t.Fatalf("exit code %d, want %d; stderr: %s", r.code, tt.wantCode, r.stderr)
			}
			if r.stdout != tt.wantOut {
				t.Errorf("stdout %q, want %q", r.stdout, tt.wantOut)
			}
			if !strings.Contains(r.stderr, tt.wantErr) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("stderr %q, want one line with %q", r.stderr, tt.wantErr)
			}
			reqs := srv.Requests()
			if len(reqs) != tt.requests {
				t.Fatalf("%d requests, want %d", len(reqs), tt.requests)
			}
			for i, body := range reqs {
				if gjson.GetBytes(body, "response_format.type").String() != "json_schema" || !gjson.GetBytes(body, "response_format.json_schema.schema").IsObject() {
					t.Errorf("request %d asks for no structured output: %s", i+1, body)
				}
			}
		})
	}
}

// TestSchemaRetryCarriesErrors checks that the retry request quotes the
// validation errors after the rejected answer.
func TestSchemaRetryCarriesErrors(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: `{"city":"Oslo","pop":"many"}`}, fakeprovider.Reply{Text: `{"city":"Oslo","pop":1}`})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv}, "--schema", citySchema, "--json", "q")
	var out run.Summary
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
		t.Fatalf("code %d, stdout %q: %v", r.code, r.stdout, err)
	}
	if out.Status != "completed" || out.Answer != `{"city":"Oslo","pop":1}` || out.Steps != 2 || len(out.UsagePerStep) != 2 {
		t.Errorf("--json = %+v", out)
	}
	msgs := gjson.GetBytes(srv.Requests()[1], "messages").Array()
	n := len(msgs)
	if msgs[n-2].Get("role").String() != "assistant" || msgs[n-2].Get("content").String() != `{"city":"Oslo","pop":"many"}` {
		t.Errorf("the rejected answer is not in the history: %s", msgs[n-2].Raw)
	}
	if retry := msgs[n-1].Get("content").String(); msgs[n-1].Get("role").String() != "user" || !strings.Contains(retry, `at /properties/pop: type: many has type "string", want "integer"`) {
		t.Errorf("retry message = %s", msgs[n-1].Raw)
	}
}

func TestSchemaFailedJSON(t *testing.T) {
	t.Parallel()
	bad := fakeprovider.Reply{Text: `{"city":1}`}
	srv := fakeprovider.Start(bad, bad, bad)
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv}, "--schema", citySchema, "--json", "q")
	var out run.Summary
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout %q: %v", r.stdout, err)
	}
	if r.code != exitLimit || out.Status != "schema_failed" || out.ExitCode != exitLimit || !strings.Contains(out.Error, "at /properties/city") {
		t.Errorf("code %d, --json = %+v", r.code, out)
	}
}

// TestMaxTokensReachesEachProtocol sends one request per protocol to the
// fake server (which answers only Chat Completions properly; the others
// fail after the request, which is all this test reads).
func TestMaxTokensReachesEachProtocol(t *testing.T) {
	t.Parallel()
	refusal := fakeprovider.Reply{Status: 400, Body: `{"error":{"message":"test stops here","type":"invalid_request_error"}}`}
	tests := []struct {
		provider, model string
		path            string // where the cap must be in the body
		absent          string // a field that must not be there
	}{
		{"openai", "gpt-4o-mini", "max_tokens", "max_completion_tokens"},
		{"openai", "o3-mini", "max_completion_tokens", "max_tokens"},
		{"openai", "gpt-5", "max_completion_tokens", "max_tokens"},
		{"openrouter", "openai/gpt-5-mini", "max_completion_tokens", "max_tokens"},
		{"deepseek", "deepseek-chat", "max_tokens", "max_completion_tokens"},
		{"openai-responses", "gpt-4o-mini", "max_output_tokens", "max_tokens"},
		{"anthropic", "claude-sonnet-4-5", "max_tokens", "max_output_tokens"},
		{"ollama", "qwen3", "options.num_predict", "max_tokens"},
	}
	env := map[string]string{"OPENAI_API_KEY": "fake-test", "ANTHROPIC_API_KEY": "fake-ant-test", "OPENROUTER_API_KEY": "fake-or-test", "DEEPSEEK_API_KEY": "fake-test"}
	for _, tt := range tests {
		t.Run(tt.provider+" "+tt.model, func(t *testing.T) {
			srv := fakeprovider.Start(refusal)
			defer srv.Close()
			runAsk(t, askEnv{env: env}, "-p", tt.provider, "-m", tt.model, "--base-url", srv.URL, "--no-stream", "--max-tokens", "777", "q")
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			if got := gjson.GetBytes(reqs[0], tt.path).Int(); got != 777 {
				t.Errorf("%s = %d in %s", tt.path, got, reqs[0])
			}
			if gjson.GetBytes(reqs[0], tt.absent).Exists() {
				t.Errorf("body has %s too: %s", tt.absent, reqs[0])
			}
		})
	}
	if r := runAsk(t, askEnv{}, "--max-tokens", "-5", "q"); r.code != exitUsage || !strings.Contains(r.stderr, "--max-tokens") {
		t.Errorf("negative --max-tokens: code %d stderr %q", r.code, r.stderr)
	}
}

// TestUsagePerStep checks the per-step usage in --json and run.finished.
func TestUsagePerStep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "read_file", `{"path":"a.txt"}`)}},
		fakeprovider.Reply{Text: "alpha"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv, wd: dir}, "--events", "q")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	finished := gjson.Parse(lines[len(lines)-1])
	if finished.Get("type").String() != "run.finished" {
		t.Fatalf("last event %s", finished.Raw)
	}
	steps := finished.Get("usage_per_step").Array()
	if len(steps) != 2 || steps[0].Get("step").Int() != 1 || steps[1].Get("step").Int() != 2 ||
		steps[1].Get("input_tokens").Int() != 100 || steps[1].Get("output_tokens").Int() != 20 || steps[1].Get("total_tokens").Int() != 120 {
		t.Errorf("usage_per_step = %s", finished.Get("usage_per_step").Raw)
	}
	if finished.Get("usage.total_tokens").Int() != 240 {
		t.Errorf("usage = %s", finished.Get("usage").Raw)
	}
}

// TestSchemaInPromptForDeepSeek checks that DeepSeek, which rejects
// json_schema response formats, gets the schema in its system prompt only,
// and that replay rebuilds the same requests.
func TestSchemaInPromptForDeepSeek(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: `{"city":"Oslo","pop":1}`})
	defer srv.Close()
	dir := t.TempDir()
	env := map[string]string{"DEEPSEEK_API_KEY": "fake-test"}
	r := runAsk(t, askEnv{env: env, wd: dir}, "-p", "deepseek", "--base-url", srv.URL, "--schema", citySchema, "--transcript", filepath.Join(dir, "run.jsonl"), "q")
	if r.code != 0 || r.stdout != `{"city":"Oslo","pop":1}`+"\n" {
		t.Fatalf("code %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	body := srv.Requests()[0]
	if gjson.GetBytes(body, "response_format").Exists() {
		t.Errorf("DeepSeek request has a response_format: %s", gjson.GetBytes(body, "response_format").Raw)
	}
	if sys := gjson.GetBytes(body, "messages.0.content").String(); !strings.HasSuffix(sys, "no prose, no code fences.\n"+citySchema) {
		t.Errorf("system prompt does not end with the schema: %q", sys)
	}
	rp := runAsk(t, askEnv{wd: dir}, "replay", "--check", filepath.Join(dir, "run.jsonl"))
	if rp.code != 0 {
		t.Errorf("replay --check: code %d stderr %s", rp.code, rp.stderr)
	}
}

// brokenPipe is a stdout whose reader has gone away.
type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// fullDisk is a stdout that cannot take more.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// An answer that cannot be written is a failure, not a success: a script
// reading --json must not be told 0 with nothing to read. A reader that went
// away is the shell's SIGPIPE, 141, quietly (DESIGN §7); any other write
// error is 1, said on stderr.
func TestFailedAnswerWriteExits1(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--json", "x"}, {"x"}} {
		srv := fakeprovider.Start(fakeprovider.Reply{Text: "42"}, fakeprovider.Reply{Text: "42"})
		defer srv.Close()
		r := runAsk(t, askEnv{server: srv, stdout: fullDisk{}}, args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, "write the answer") {
			t.Errorf("ask %v to a full disk: exit %d, stderr %q; want 1 and the write error", args, r.code, r.stderr)
		}
		r = runAsk(t, askEnv{server: srv, stdout: brokenPipe{}}, args...)
		if r.code != fault.ExitPipe || r.stderr != "" {
			t.Errorf("ask %v to a closed pipe: exit %d, stderr %q; want 141 and nothing", args, r.code, r.stderr)
		}
	}
}

// A provider's or a model's text cannot drive the terminal it is shown on:
// an OSC 52 sequence in the answer, or in a provider's error, reaches a
// terminal escaped. A pipe gets the answer's bytes as they are.
func TestProviderTextCannotDriveTheTerminal(t *testing.T) {
	t.Parallel()
	const osc52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
	for _, tt := range []struct {
		env  askEnv
		want string
	}{
		{askEnv{outTTY: true}, `done \u001b]52;c;cm0gLXJmIH4=\u0007` + "\n"},
		{askEnv{}, "done " + osc52 + "\n"},
	} {
		srv := fakeprovider.Start(fakeprovider.Reply{Text: "done " + osc52})
		defer srv.Close()
		tt.env.server = srv
		r := runAsk(t, tt.env, "hi")
		if r.code != 0 || r.stdout != tt.want {
			t.Errorf("stdout a terminal %v: %q, want %q", tt.env.outTTY, r.stdout, tt.want)
		}
	}
	srv := fakeprovider.Start(fakeprovider.Reply{Status: 400, Body: `{"error":{"message":"bad ` + strings.ReplaceAll(osc52, "\x1b", `\u001b`) + `"}}`})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv, tty: true}, "--retries", "0", "hi")
	if strings.Contains(r.stderr, "\x1b]52") || !strings.Contains(r.stderr, `\u001b]52`) {
		t.Errorf("the provider's error reached the terminal raw: %q", r.stderr)
	}
}
