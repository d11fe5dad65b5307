package main

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// secretMark is the distinctive middle of every test key: no fragment of a
// key may show anywhere.
const secretMark = "LEAKCHECK9f8e7d6c5b4a"

// leakProvider is one provider as the secrets test drives it: the variable
// its key comes from and a two-step conversation in its own wire format
// (a list_directory call, then the answer "done").
type leakProvider struct {
	name, keyEnv string
	replies      []fakeprovider.Reply
	noStream     bool
}

func leakProviders() []leakProvider {
	chat := []fakeprovider.Reply{
		{Calls: []providers.ToolCall{fakeprovider.Call("call_1", "list_directory", `{"path":"."}`)}},
		{Text: "done"},
	}
	body := func(s ...string) []fakeprovider.Reply {
		var out []fakeprovider.Reply
		for _, b := range s {
			out = append(out, fakeprovider.Reply{Body: b, ContentType: "application/json"})
		}
		return out
	}
	return []leakProvider{
		{name: "openai", keyEnv: "OPENAI_API_KEY", replies: chat},
		{name: "openrouter", keyEnv: "OPENROUTER_API_KEY", replies: chat},
		{name: "deepseek", keyEnv: "DEEPSEEK_API_KEY", replies: chat},
		{name: "moonshot", keyEnv: "MOONSHOT_API_KEY", replies: chat},
		{name: "anthropic", keyEnv: "ANTHROPIC_API_KEY", noStream: true, replies: body(
			`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"list_directory","input":{"path":"."}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}`,
			`{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":20,"output_tokens":1}}`)},
		{name: "openai-responses", keyEnv: "OPENAI_API_KEY", noStream: true, replies: body(
			`{"id":"resp_1","object":"response","status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"list_directory","arguments":"{\"path\":\".\"}","status":"completed"}],"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}`,
			`{"id":"resp_2","object":"response","status":"completed","output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"done","annotations":[]}]}],"usage":{"input_tokens":20,"output_tokens":1,"total_tokens":21}}`)},
		{name: "ollama", keyEnv: "OLLAMA_API_KEY", noStream: true, replies: body(
			`{"model":"qwen3","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"list_directory","arguments":{"path":"."}}}]},"done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":5}`,
			`{"model":"qwen3","created_at":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":"done"},"done":true,"done_reason":"stop","prompt_eval_count":20,"eval_count":1}`)},
		{name: "gemini", keyEnv: "GEMINI_API_KEY", noStream: true, replies: body(
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"list_directory","args":{"path":"."}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15}}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"done"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":1,"totalTokenCount":21}}`)},
	}
}

// echoCredentials is a provider (or the proxy in front of it) whose error
// echoes the request's headers and URL, credentials and all: first a 500
// page, which is retried, then a 400 in the usual JSON shape.
func echoCredentials() []http.Handler {
	dump := func(r *http.Request) string {
		var lines []string
		for k, vs := range r.Header {
			lines = append(lines, k+": "+strings.Join(vs, ", "))
		}
		sort.Strings(lines)
		return r.URL.String() + " " + strings.Join(lines, "; ")
	}
	return []http.Handler{
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(502)
			fmt.Fprintf(w, "<html><body><h1>Bad Gateway</h1><pre>%s</pre></body></html>", dump(r))
		}),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":%s,"type":"invalid_request_error"}}`, providers.Quote("rejected request "+dump(r)))
		}),
	}
}

func TestKeysNeverShow(t *testing.T) {
	t.Parallel()
	for _, p := range leakProviders() {
		t.Run(p.name, func(t *testing.T) {
			prov, err := catalog.Lookup(p.name)
			if err != nil {
				t.Skipf("no provider %s yet", p.name)
			}
			if _, err := catalog.NewProtocol(prov.Protocol); err != nil {
				t.Skipf("%s: %v", p.name, err)
			}
			key := "fake-" + p.name + "-" + secretMark + "-0123456789abcdef"
			runs := []struct {
				name     string
				steps    []http.Handler
				args     []string
				wantCode int
			}{
				{"loop with events", nil, []string{"--events"}, 0},
				{"loop with json", nil, []string{"--json"}, 0},
				{"echoed error with events", echoCredentials(), []string{"--events", "--retries", "1"}, 3},
				{"echoed error with json", echoCredentials(), []string{"--json", "--retries", "1"}, 3},
			}
			for _, run := range runs {
				t.Run(run.name, func(t *testing.T) {
					steps := run.steps
					if steps == nil {
						for _, r := range p.replies {
							steps = append(steps, fakeprovider.Serve(r))
						}
					}
					srv := fakeprovider.StartSteps(steps...)
					defer srv.Close()
					state := t.TempDir()
					transcript := filepath.Join(t.TempDir(), "run.jsonl")
					args := append([]string{"--verbose", "--transcript", transcript}, run.args...)
					if p.noStream {
						args = append(args, "--no-stream")
					}
					r := runAsk(t, askEnv{env: map[string]string{
						"ASK_PROVIDER": p.name, "ASK_BASE_URL": srv.URL, p.keyEnv: key, "XDG_STATE_HOME": state,
					}}, append(args, "list the files")...)
					if r.code != run.wantCode {
						t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, run.wantCode, r.stderr)
					}
					if !sentKey(srv, key) {
						t.Fatal("the key never reached the server, so the test proves nothing")
					}
					if r.stdout == "" {
						t.Error("stdout is empty: --events or --json printed nothing to search")
					}
					outputs := map[string]string{"stdout": r.stdout, "stderr": r.stderr}
					files := readTree(t, filepath.Dir(transcript))
					for k, v := range readTree(t, state) {
						files[k] = v
					}
					if len(files) < 2 {
						t.Errorf("expected the transcript and the last run's file, found %d files", len(files))
					}
					for k, v := range files {
						outputs[k] = v
					}
					for name, s := range outputs {
						if strings.Contains(s, secretMark) {
							i := strings.Index(s, secretMark)
							t.Errorf("the key shows in %s: …%s…", name, s[max(0, i-80):min(len(s), i+40)])
						}
					}
					if run.wantCode != 0 && !strings.Contains(r.stderr, "[redacted]") {
						t.Errorf("the echoed key was not marked as redacted in the error: %s", r.stderr)
					}
				})
			}
		})
	}
}

// sentKey reports whether any request carried key in a header.
func sentKey(srv *fakeprovider.Server, key string) bool {
	for _, h := range srv.Headers() {
		for _, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, key) {
					return true
				}
			}
		}
	}
	return false
}

// readTree returns every file under dir by path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// `ask provider send` posts a body by hand with the key from the
// environment; neither its output nor its errors may show the key, even
// when the server echoes it back.
func TestSendNeverShowsTheKey(t *testing.T) {
	t.Parallel()
	for _, p := range leakProviders() {
		t.Run(p.name, func(t *testing.T) {
			key := "fake-" + p.name + "-" + secretMark + "-send"
			for _, tt := range []struct {
				name     string
				steps    []http.Handler
				wantCode int
			}{
				{"answer", []http.Handler{fakeprovider.Serve(p.replies[len(p.replies)-1])}, 0},
				{"echoed error", echoCredentials(), 3},
			} {
				t.Run(tt.name, func(t *testing.T) {
					srv := fakeprovider.StartSteps(tt.steps...)
					defer srv.Close()
					r := runAsk(t, askEnv{stdin: `{"model":"m","messages":[]}`, env: map[string]string{
						"ASK_BASE_URL": srv.URL, p.keyEnv: key, "XDG_STATE_HOME": t.TempDir(),
					}}, "provider", "send", "-p", p.name, "--no-stream", "--retries", "1")
					if r.code != tt.wantCode {
						t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.wantCode, r.stderr)
					}
					if !sentKey(srv, key) {
						t.Fatal("the key never reached the server, so the test proves nothing")
					}
					for name, s := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
						if i := strings.Index(s, secretMark); i >= 0 {
							t.Errorf("the key shows in %s: …%s…", name, s[max(0, i-80):min(len(s), i+40)])
						}
					}
				})
			}
		})
	}
}

// TestKeyNamedByKeyEnvStaysWithAsk: a key read from a variable of any name
// (the config file's key_env) reaches no process the tools start, and a
// file or output that holds it reaches neither the model nor the record.
// Not parallel: the children inherit the process's real environment.
func TestKeyNamedByKeyEnvStaysWithAsk(t *testing.T) {
	const key = "fake-test-work-credential-7f3a"
	t.Setenv("WORK_LLM_CREDENTIAL", key)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".config", "ask"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "ask", "config.json"),
		[]byte(`{"providers":{"openai":{"key_env":"WORK_LLM_CREDENTIAL"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	wd := t.TempDir()
	os.WriteFile(filepath.Join(wd, ".env"), []byte("TOKEN="+key+"\n"), 0o600)
	os.WriteFile(filepath.Join(wd, "tools.json"), []byte(`{"tools":[{"name":"show_env","description":"Print the environment","command":"env","risk":"read"}]}`), 0o600)
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("1", "shell", `{"command":"echo shell sees $WORK_LLM_CREDENTIAL; env"}`),
			fakeprovider.Call("2", "show_env", `{}`),
			fakeprovider.Call("3", "read_file", `{"path":".env"}`),
		}},
		fakeprovider.Reply{Text: "done"},
	)
	defer srv.Close()
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	r := runAsk(t, askEnv{server: srv, wd: wd, env: map[string]string{
		"HOME": home, "ASK_PROVIDER": "openai", "ASK_BASE_URL": srv.URL, "OPENAI_API_KEY": "", "WORK_LLM_CREDENTIAL": key,
	}}, "--yes", "--json", "--tools-file", "tools.json", "--transcript", transcript, "go")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := srv.Headers()[0].Get("Authorization"); got != "Bearer "+key {
		t.Fatalf("the run did not use the key_env key: %q", got)
	}
	second := string(srv.Requests()[1])
	if !strings.Contains(second, "shell sees") {
		t.Fatalf("the tools did not run: %.500s", second)
	}
	rec, _ := os.ReadFile(transcript)
	for name, text := range map[string]string{"the follow-up request": second, "stdout": r.stdout, "stderr": r.stderr, "the transcript": string(rec)} {
		if strings.Contains(text, key) {
			t.Errorf("%s holds the key", name)
		}
	}
}
