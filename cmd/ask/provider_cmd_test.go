package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/stage"
)

const secretKey = "fake-test-distinctive-secret-4242"

func TestProviderListJSON(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ANTHROPIC_API_KEY": secretKey, "GOOGLE_API_KEY": secretKey, "OLLAMA_HOST": "gpu-box:11434"}
	r := runAsk(t, askEnv{env: env}, "provider", "list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, secretKey) {
		t.Fatal("provider list printed a key")
	}
	var rows []stage.ProviderInfo
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("piped output is not compact JSON: %v\n%s", err, r.stdout)
	}
	if len(rows) != len(catalog.All()) {
		t.Fatalf("%d providers listed, the catalog has %d", len(rows), len(catalog.All()))
	}
	byName := map[string]stage.ProviderInfo{}
	for _, row := range rows {
		byName[row.Name] = row
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"anthropic key set", byName["anthropic"].KeySet && byName["anthropic"].KeyRequired},
		{"gemini key set through its second variable", byName["gemini"].KeySet && strings.Join(byName["gemini"].KeyEnv, ",") == "GEMINI_API_KEY,GOOGLE_API_KEY"},
		{"openai key unset", !byName["openai"].KeySet && byName["openai"].KeyEnv[0] == "OPENAI_API_KEY"},
		{"ollama's key is optional", !byName["ollama"].KeyRequired},
		{"ollama base URL from OLLAMA_HOST", byName["ollama"].BaseURL == "http://gpu-box:11434"},
		{"openai protocol", byName["openai-responses"].Protocol == "responses" && byName["deepseek"].Protocol == "openai"},
		{"lmstudio needs no key", len(byName["lmstudio"].KeyEnv) == 0 && !byName["lmstudio"].KeyRequired},
		{"command has no native tools", !byName["command"].NativeTools && !byName["command"].Streaming && byName["command"].BaseURL == ""},
		{"native tools and streaming", byName["anthropic"].NativeTools && byName["anthropic"].Streaming},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %+v", c.name, rows)
		}
	}
}

func TestProviderListTable(t *testing.T) {
	t.Parallel()
	r := runAsk(t, askEnv{tty: true, env: map[string]string{"OPENAI_API_KEY": secretKey}}, "provider", "list")
	if r.code != 0 || strings.Contains(r.stdout, secretKey) {
		t.Fatalf("exit %d, stdout %s", r.code, r.stdout)
	}
	for _, want := range []string{"NAME", "PROTOCOL", "BASE URL", "openai ", "OPENAI_API_KEY (set)", "ANTHROPIC_API_KEY (unset)",
		"GEMINI_API_KEY or GOOGLE_API_KEY (unset)", "OLLAMA_API_KEY (optional, unset)", "none needed", "text protocol"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	asJSON := runAsk(t, askEnv{tty: true}, "provider", "list", "--json")
	if !strings.HasPrefix(asJSON.stdout, "[\n  {") {
		t.Errorf("--json on a terminal is not indented JSON: %.80s", asJSON.stdout)
	}
}

// TestStageOutputOnATerminal: indented JSON on a terminal, compact in a
// pipe, the same value either way.
func TestStageOutputOnATerminal(t *testing.T) {
	t.Parallel()
	in := `[{"id":"c1","name":"read_file","content":"x","is_error":false}]`
	piped := runAsk(t, askEnv{stdin: in}, "provider", "format-tool-result", "-p", "anthropic")
	tty := runAsk(t, askEnv{stdin: in, tty: true}, "provider", "format-tool-result", "-p", "anthropic")
	if strings.Count(piped.stdout, "\n") != 1 || !strings.Contains(tty.stdout, "\n  {\n    \"role\": \"user\"") {
		t.Errorf("piped %q\nterminal %q", piped.stdout, tty.stdout)
	}
	var a, b any
	json.Unmarshal([]byte(piped.stdout), &a)
	json.Unmarshal([]byte(tty.stdout), &b)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if a == nil || string(ja) != string(jb) {
		t.Errorf("the two outputs differ: %s vs %s", piped.stdout, tty.stdout)
	}
}

func TestSend(t *testing.T) {
	t.Parallel()
	streamReq := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true}`
	plainReq := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	cut := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n"
	tests := []struct {
		name      string
		reply     fakeprovider.Reply
		body      string
		noKey     bool
		args      []string
		wantCode  int
		wantOut   string // exact stdout; "" checks nothing
		wantInOut string
		wantErr   string
	}{
		{name: "plain body", reply: fakeprovider.Reply{Text: "hello"}, body: plainReq,
			wantOut: string(fakeprovider.ChatJSON(fakeprovider.Reply{Text: "hello"}))},
		{name: "stream", reply: fakeprovider.Reply{Text: "hello"}, body: streamReq,
			wantOut: string(fakeprovider.ChatStream(fakeprovider.Reply{Text: "hello"}))},
		{name: "rejected key", reply: fakeprovider.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + secretKey + `","type":"invalid_request_error","code":"invalid_api_key"}}`},
			body: plainReq, wantCode: exitAuth, wantErr: "/chat/completions (invalid_request_error): Incorrect API key provided: [redacted]"},
		{name: "missing key", noKey: true, body: plainReq, wantCode: exitAuth, wantErr: "no API key for openai: set OPENAI_API_KEY"},
		{name: "server error", reply: fakeprovider.Reply{Status: 500, Body: "<html><title>Bad Gateway</title></html>"}, body: plainReq,
			args: []string{"--retries", "0"}, wantCode: exitProvider, wantErr: "/chat/completions: HTML page: Bad Gateway"},
		{name: "stream cut short", reply: fakeprovider.Reply{Body: cut}, body: streamReq,
			wantCode: exitProvider, wantOut: cut, wantErr: "openai: read response: openai: stream ended early"},
		{name: "error inside a 200 stream", reply: fakeprovider.Reply{Body: readTestdata(t, "stages/fixtures/openrouter/pydantic-stream-error-in-200.sse")},
			body: streamReq, wantCode: exitProvider, wantInOut: "Token limit reached", wantErr: "openai: error in stream: Token limit reached"},
		{name: "JSON answer to a stream request", reply: fakeprovider.Reply{Body: `{"error":{"message":"nope"}}`}, body: streamReq,
			wantOut: `{"error":{"message":"nope"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.Start(tt.reply)
			defer srv.Close()
			env := askEnv{server: srv, stdin: tt.body}
			if tt.noKey {
				env.env = map[string]string{"OPENAI_API_KEY": ""}
			} else {
				env.env = map[string]string{"OPENAI_API_KEY": secretKey}
			}
			r := runAsk(t, env, append([]string{"provider", "send", "-p", "openai"}, tt.args...)...)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr %s", r.code, tt.wantCode, r.stderr)
			}
			if tt.wantOut != "" && r.stdout != tt.wantOut {
				t.Errorf("stdout\n%q\nwant\n%q", r.stdout, tt.wantOut)
			}
			if !strings.Contains(r.stdout, tt.wantInOut) {
				t.Errorf("stdout lacks %q: %q", tt.wantInOut, r.stdout)
			}
			if tt.wantErr == "" && r.stderr != "" || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("stderr %q, want %q", r.stderr, tt.wantErr)
			}
			if strings.Contains(r.stdout+r.stderr, secretKey) {
				t.Error("the key was printed")
			}
			if tt.noKey {
				if n := len(srv.Requests()); n != 0 {
					t.Errorf("%d requests sent without a key", n)
				}
				return
			}
			reqs, headers := srv.Requests(), srv.Headers()
			if len(reqs) == 0 || string(reqs[0]) != tt.body {
				t.Fatalf("the server got %q, want the body as given", reqs)
			}
			if got := headers[0].Get("Authorization"); got != "Bearer "+secretKey {
				t.Errorf("Authorization %q", got)
			}
		})
	}
}

// TestSendGemini: Gemini puts the model and streaming in the URL, not the
// body; send takes them from --model (or the default) and --no-stream.
func TestSendGemini(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var urls []string
	var keys []string
	stream := readTestdata(t, "stages/fixtures/gemini/pydantic-3pro-stream-thought-signature.sse")
	plain := readTestdata(t, "stages/fixtures/gemini/fantasy-25flash-tool.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		mu.Lock()
		urls = append(urls, r.URL.String())
		keys = append(keys, r.Header.Get("X-Goog-Api-Key"))
		mu.Unlock()
		if strings.Contains(r.URL.Path, "streamGenerateContent") {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, stream)
			return
		}
		io.WriteString(w, plain)
	}))
	defer srv.Close()
	env := askEnv{stdin: `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
		env: map[string]string{"GEMINI_API_KEY": secretKey, "GEMINI_BASE_URL": srv.URL}}

	r := runAsk(t, env, "provider", "send", "-p", "gemini")
	if r.code != 0 || r.stdout != stream {
		t.Errorf("stream: exit %d, stderr %s, stdout %.100q", r.code, r.stderr, r.stdout)
	}
	r = runAsk(t, env, "provider", "send", "-p", "gemini", "--no-stream", "-m", "gemini-2.5-pro")
	if r.code != 0 || r.stdout != plain {
		t.Errorf("plain: exit %d, stderr %s", r.code, r.stderr)
	}
	want := []string{"/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "/models/gemini-2.5-pro:generateContent"}
	if strings.Join(urls, " ") != strings.Join(want, " ") {
		t.Errorf("URLs %q, want %q", urls, want)
	}
	for _, k := range keys {
		if k != secretKey {
			t.Errorf("x-goog-api-key %q", k)
		}
	}
}

// TestSendDecidesStreaming covers each protocol's rule for a body that
// does or does not ask to stream.
func TestSendDecidesStreaming(t *testing.T) {
	t.Parallel()
	tests := []struct {
		protocol, body string
		noStream, want bool
	}{
		{"openai", `{"stream":true}`, false, true},
		{"openai", `{"stream":false}`, false, false},
		{"openai", `{}`, false, false},
		{"anthropic", `{"stream":true}`, true, true},
		{"responses", `{}`, false, false},
		{"ollama", `{}`, false, true},
		{"ollama", `{"stream":false}`, false, false},
		{"gemini", `{}`, false, true},
		{"gemini", `{}`, true, false},
	}
	for _, tt := range tests {
		prov := catalog.All()[slices.IndexFunc(catalog.All(), func(p catalog.Provider) bool { return p.Protocol == tt.protocol })]
		if got := prov.SendStreams([]byte(tt.body), tt.noStream); got != tt.want {
			t.Errorf("%s %s --no-stream=%v: stream %v, want %v", tt.protocol, tt.body, tt.noStream, got, tt.want)
		}
	}
}

// TestStagesChainForEveryProtocol takes each protocol's recorded tool
// call through parse-tool-calls, tools run and format-tool-result: the
// results answer every call by its id.
func TestStagesChainForEveryProtocol(t *testing.T) {
	t.Parallel()
	fixtures := map[string]string{
		"openai":           "openai-chat/fantasy-gpt4o-multi-tool.json",
		"openai-responses": "openai-responses/fantasy-gpt5-multi-tool.json",
		"anthropic":        "anthropic/fantasy-sonnet4-multi-tool-stream.sse",
		"gemini":           "gemini/fantasy-3pro-multi-tool-stream.sse",
		"ollama":           "ollama/fantasy-pr63-gptoss120b-multi-tool-stream.ndjson",
	}
	for prov, fixture := range fixtures {
		t.Run(prov, func(t *testing.T) {
			calls := runAsk(t, askEnv{stdin: readTestdata(t, "stages/fixtures/"+fixture)}, "provider", "parse-tool-calls", "-p", prov)
			parsed, err := providers.ParseToolCallsJSON([]byte(calls.stdout))
			if calls.code != 0 || err != nil || len(parsed) == 0 {
				t.Fatalf("parse-tool-calls: exit %d, %v, %s", calls.code, err, calls.stderr)
			}
			// The recorded tools (add, multiply, weather) are not ask's:
			// each result is an unknown-tool error, still answering its call.
			results := runAsk(t, askEnv{stdin: calls.stdout}, "tools", "run")
			rs, err := providers.ParseToolResultsJSON([]byte(results.stdout))
			if results.code != 0 || err != nil || len(rs) != len(parsed) {
				t.Fatalf("tools run: exit %d, %v, %s", results.code, err, results.stderr)
			}
			for i, res := range rs {
				if res.ID != parsed[i].ID || res.Name != parsed[i].Name || !res.IsError {
					t.Errorf("result %d = %+v for call %+v", i, res, parsed[i])
				}
			}
			msgs := runAsk(t, askEnv{stdin: results.stdout}, "provider", "format-tool-result", "-p", prov)
			if msgs.code != 0 {
				t.Fatalf("format-tool-result: exit %d, %s", msgs.code, msgs.stderr)
			}
			for _, c := range parsed {
				if !strings.Contains(msgs.stdout, `"`+c.ID+`"`) {
					t.Errorf("call id %s is not answered in %s", c.ID, msgs.stdout)
				}
			}
		})
	}
}

// TestStagesUseTheConfigFile: the stages choose the provider, its base
// URL and its key as a run does, config file included.
func TestStagesUseTheConfigFile(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "hi"})
	defer srv.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.json")
	os.WriteFile(conf, []byte(`{"provider": "anthropic", "profiles": {"work": {"provider": "openai",
		"providers": {"openai": {"base_url": "`+srv.URL+`", "key_env": "WORK_OPENAI_KEY"}}}}}`), 0o600)
	env := map[string]string{"ASK_CONFIG": conf, "WORK_OPENAI_KEY": secretKey}

	tools := `[{"type":"function","function":{"name":"x"}}]`
	r := runAsk(t, askEnv{env: env, stdin: tools}, "provider", "format-tools")
	if r.code != 0 || !strings.Contains(r.stdout, `"input_schema"`) {
		t.Errorf("the config file's provider (anthropic) was not used: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	r = runAsk(t, askEnv{env: env, stdin: `{"model":"gpt-4o-mini","messages":[]}`}, "provider", "send", "--profile", "work")
	if r.code != 0 || !strings.Contains(r.stdout, `"hi"`) {
		t.Fatalf("send with the profile: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	if got := srv.Headers()[0].Get("Authorization"); got != "Bearer "+secretKey {
		t.Errorf("the key of key_env was not sent: %q", got)
	}
	os.WriteFile(conf, []byte(`{"provider": "anthropic",}`), 0o600)
	r = runAsk(t, askEnv{env: env, stdin: tools}, "provider", "format-tools")
	if r.code != exitUsage || !strings.Contains(r.stderr, "config.json") {
		t.Errorf("a broken config file: exit %d %s", r.code, r.stderr)
	}
}
