package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
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
		schema   string
		wantCode int
		wantOut  string
		wantErr  string // substring of stderr
		requests int
	}{
		{name: "valid the first time", replies: []fakeprovider.Reply{text(`{"city":"Oslo","pop":700000}`)},
			schema: citySchema, wantOut: `{"city":"Oslo","pop":700000}` + "\n", requests: 1},
		{name: "schema from a file, fenced answer", replies: []fakeprovider.Reply{text("```json\n{\"city\":\"Oslo\"}\n```")},
			schema: "city.json", wantOut: `{"city":"Oslo"}` + "\n", requests: 1},
		{name: "invalid then valid", replies: []fakeprovider.Reply{text(`{"city":"Oslo"}`), text(`{"city":"Oslo","pop":1}`)},
			schema: citySchema, wantOut: `{"city":"Oslo","pop":1}` + "\n", requests: 2},
		{name: "never valid", replies: []fakeprovider.Reply{text("Oslo"), text("Oslo!"), text(`{"city":"Oslo","pop":"many"}`)},
			schema: citySchema, wantCode: fault.ExitLimit, wantOut: "",
			wantErr: `stopped: the answer did not match the schema after 3 attempts: at /properties/pop: type: many has type "string", want "integer"`, requests: 3},
		{name: "unreadable schema file", schema: "missing.json", wantCode: fault.ExitUsage, wantErr: "--schema: open"},
		{name: "schema file is not JSON", schema: "broken.json", wantCode: fault.ExitUsage, wantErr: "--schema broken.json: not valid JSON"},
		{name: "not a JSON Schema", schema: "bad-type.json", wantCode: fault.ExitUsage,
			wantErr: "--schema bad-type.json: not a valid JSON Schema: at /type:"},
		{name: "inline schema is not JSON", schema: `{"type":`, wantCode: fault.ExitUsage, wantErr: "--schema: not valid JSON"},
		{name: "schema must be an object", schema: "true.json", wantCode: fault.ExitUsage, wantErr: "--schema true.json: a JSON Schema for the answer must be a JSON object"},
		{name: "inline schema with spaces", schema: " {} ", replies: []fakeprovider.Reply{text(`{}`)},
			wantOut: "{}\n", requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.Start(tt.replies...)
			defer srv.Close()
			w := newWorld(t, srv)
			w.wd = dir
			r := w.ask("q", "schema", tt.schema)
			if r.code != tt.wantCode {
				t.Fatalf("exit code %d, want %d; stderr: %s", r.code, tt.wantCode, r.stderr)
			}
			if r.answer() != tt.wantOut {
				t.Errorf("answer %q, want %q", r.answer(), tt.wantOut)
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
	r := newWorld(t, srv).ask("q", "schema", citySchema)
	if r.code != 0 {
		t.Fatalf("code %d, stderr %q", r.code, r.stderr)
	}
	out := r.summary()
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
	r := newWorld(t, srv).ask("q", "schema", citySchema)
	out := r.summary()
	if r.code != fault.ExitLimit || out.Status != "schema_failed" || out.ExitCode != fault.ExitLimit || !strings.Contains(out.Error, "at /properties/city") {
		t.Errorf("code %d, --json = %+v", r.code, out)
	}
}

// TestSchemaInPromptForDeepSeek checks that DeepSeek, which rejects
// json_schema response formats, gets the schema in its system prompt only,
// and that replay rebuilds the same requests.
func TestSchemaInPromptForDeepSeek(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: `{"city":"Oslo","pop":1}`})
	defer srv.Close()
	w := newWorld(t, nil).with("DEEPSEEK_API_KEY", "fake-test")
	file := filepath.Join(w.wd, "run.jsonl")
	r := w.ask("q", "provider", "deepseek", "base-url", srv.URL, "schema", citySchema, "transcript", file)
	if r.code != 0 || r.answer() != `{"city":"Oslo","pop":1}`+"\n" {
		t.Fatalf("code %d answer %q stderr %s", r.code, r.answer(), r.stderr)
	}
	body := srv.Requests()[0]
	if gjson.GetBytes(body, "response_format").Exists() {
		t.Errorf("DeepSeek request has a response_format: %s", gjson.GetBytes(body, "response_format").Raw)
	}
	if sys := gjson.GetBytes(body, "messages.0.content").String(); !strings.HasSuffix(sys, "no prose, no code fences.\n"+citySchema) {
		t.Errorf("system prompt does not end with the schema: %q", sys)
	}
	srv.Close()
	if rp := w.replay(file, ReplayOptions{}); rp.code != 0 || rp.diffs != "" {
		t.Errorf("replay --check: code %d stderr %s\n%s", rp.code, rp.stderr, rp.diffs)
	}
}
