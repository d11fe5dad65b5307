package run

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers"
)

func textReplies(texts ...string) []fakeprovider.Reply {
	var rs []fakeprovider.Reply
	for _, t := range texts {
		rs = append(rs, fakeprovider.Reply{Text: t})
	}
	return rs
}

// workdir makes a directory holding a.txt.
func workdir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const readCall = `{"tool": "read_file", "parameters": {"path": "a.txt"}, "terminate": false}`

func TestToolProtocolJSON(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(textReplies("Reading it.\n"+readCall, "It says alpha.")...)
	defer srv.Close()
	w := newWorld(t, srv)
	w.wd = workdir(t)
	r := w.ask("what is in a.txt?", "tool-protocol", "json")
	if r.code != 0 {
		t.Fatalf("code %d, stderr %s", r.code, r.stderr)
	}
	got := r.summary()
	if got.Answer != "It says alpha." || len(got.ToolCalls) != 1 || !strings.Contains(got.ToolCalls[0].Content, "1: alpha") {
		t.Errorf("--json = %+v", got)
	}
	reqs := srv.Requests()
	for i, req := range reqs {
		if gjson.GetBytes(req, "tools").Exists() {
			t.Errorf("request %d declares native tools", i+1)
		}
	}
	if sys := gjson.GetBytes(reqs[0], "messages.0.content").String(); !strings.Contains(sys, `{"tool": "TOOL_NAME"`) {
		t.Errorf("system prompt does not teach the form: %q", sys)
	}
	if last := gjson.GetBytes(reqs[1], "messages.@reverse.0.content").String(); !strings.HasPrefix(last, `<tool_result call="1" tool="read_file">`) {
		t.Errorf("results message = %q", last)
	}
}

func TestToolProtocolErrors(t *testing.T) {
	t.Parallel()
	bad := `{"tool": "read_file", "parameters": {}}`
	tests := []struct {
		name     string
		replies  []fakeprovider.Reply
		flags    []any
		wantCode int
		wantErr  string
	}{
		{"three unreadable replies", textReplies(bad, bad, bad), []any{"tool-protocol", "markdown"}, 5, "did not follow the tool protocol"},
		{"unknown protocol", nil, []any{"tool-protocol", "xml"}, 2, `--tool-protocol "xml"`},
		{"command without the command provider", nil, []any{"command", "ollama run x"}, 2, "--provider command"},
		{"native has no fallback", []fakeprovider.Reply{{Status: 400, Body: fixture(t, "ollama-v1-does-not-support-tools.json")}},
			[]any{"tool-protocol", "native"}, 3, "does not support tools"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.Start(tt.replies...)
			defer srv.Close()
			r := newWorld(t, srv).ask("x", tt.flags...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("code %d, stderr %q; want %d and %q", r.code, r.stderr, tt.wantCode, tt.wantErr)
			}
		})
	}
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// With --tool-protocol auto, a provider that refuses tools makes the run
// switch to the JSON text protocol once, and say so.
func TestToolProtocolAutoFallback(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ fixture string }{
		{"ollama-v1-does-not-support-tools.json"},
		{"ollama-api-chat-does-not-support-tools.json"},
		{"openrouter-no-endpoints-tool-use.json"},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			status := 400
			if strings.HasPrefix(tt.fixture, "openrouter") {
				status = 404
			}
			replies := append([]fakeprovider.Reply{{Status: status, Body: fixture(t, tt.fixture)}}, textReplies(readCall, "It says alpha.")...)
			srv := fakeprovider.Start(replies...)
			defer srv.Close()
			w := newWorld(t, srv)
			w.wd = workdir(t)
			r := w.ask("what is in a.txt?")
			if r.code != 0 || r.answer() != "It says alpha.\n" {
				t.Fatalf("code %d, answer %q, stderr %q", r.code, r.answer(), r.stderr)
			}
			if r.stderr != "ask: openai: the model does not support tools; switching to --tool-protocol json\n" {
				t.Errorf("stderr = %q", r.stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 || !gjson.GetBytes(reqs[0], "tools").Exists() || gjson.GetBytes(reqs[1], "tools").Exists() || gjson.GetBytes(reqs[2], "tools").Exists() {
				t.Errorf("requests: %d, tools in each: %v %v", len(reqs), gjson.GetBytes(reqs[0], "tools").Exists(), gjson.GetBytes(reqs[1], "tools").Exists())
			}
			// The retried first step is the same conversation.
			if gjson.GetBytes(reqs[0], "messages.1").Raw != gjson.GetBytes(reqs[1], "messages.1").Raw {
				t.Errorf("the retry changed the prompt: %s", reqs[1])
			}
		})
	}
	// A second refusal is an error. (That --quiet keeps the note to
	// itself is cmd/ask's TestQuietKeepsTheFallbackNote.)
	srv := fakeprovider.Start(fakeprovider.Reply{Status: 400, Body: fixture(t, "ollama-v1-does-not-support-tools.json")},
		fakeprovider.Reply{Status: 400, Body: fixture(t, "ollama-v1-does-not-support-tools.json")})
	defer srv.Close()
	r := newWorld(t, srv).ask("x")
	if r.code != 3 || len(srv.Requests()) != 2 {
		t.Errorf("code %d, stderr %q, %d requests", r.code, r.stderr, len(srv.Requests()))
	}
}

// modelScript writes a shell script that plays a model: step N (the
// number of "[assistant]" headers on stdin) prints replies[N-1]. Its
// stdin for each step is appended to stdin.log beside it.
func modelScript(t *testing.T, replies ...string) (dir, cmd string) {
	t.Helper()
	dir = t.TempDir()
	for i, r := range replies {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i+1)+".txt"), []byte(r), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `input=$(cat); printf '%s\n=====\n' "$input" >>"$D/stdin.log"
n=$(printf '%s\n' "$input" | grep -c '^\[assistant\]$'); cat "$D/$n.txt"`
	if err := os.WriteFile(filepath.Join(dir, "model.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, "D=" + dir + " sh " + filepath.Join(dir, "model.sh")
}

func TestCommandProvider(t *testing.T) {
	t.Parallel()
	dir, cmd := modelScript(t, "\x1b[32m⠋\r\x1b[K\x1b[0m"+readCall, "It says alpha.")
	w := newWorld(t, nil)
	w.wd = workdir(t)
	r := w.ask("what is in a.txt?", "provider", "command", "command", cmd)
	if r.code != 0 {
		t.Fatalf("code %d, stderr %s", r.code, r.stderr)
	}
	got := r.summary()
	if got.Answer != "It says alpha." || got.Provider != "command" || got.Model != cmd || len(got.ToolCalls) != 1 || got.Steps != 2 {
		t.Errorf("--json = %+v", got)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "stdin.log"))
	if !strings.Contains(string(log), "[user]\n<tool_result call=\"1\" tool=\"read_file\">\n1: alpha\n</tool_result>\n\n[assistant]") {
		t.Errorf("stdin of the second step:\n%s", log)
	}
}

func TestCommandProviderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		flags    []any
		env      []string
		wantCode int
		wantErr  string
	}{
		{"no command", []any{"provider", "command"}, nil, 2, "--provider command needs the model to run"},
		{"native", []any{"provider", "command", "command", "cat", "tool-protocol", "native"}, nil, 2, "no native tool calling"},
		{"missing program", []any{"provider", "command", "command", "no-such-runner-xyz run m"}, nil, 2, "not found"},
		{"failing program", []any{"provider", "command", "command", "echo 'model not pulled' >&2; exit 4"}, nil, 3, "exited with status 4: model not pulled"},
		{"from the environment", []any{"provider", "command"}, []string{"ASK_COMMAND", "cat >/dev/null; echo fine"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newWorld(t, nil).with(tt.env...).ask("x", tt.flags...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) || strings.Count(r.stderr, "\n") > 1 {
				t.Errorf("code %d, stderr %q; want %d and %q on one line", r.code, r.stderr, tt.wantCode, tt.wantErr)
			}
		})
	}
}

// The Chat Completions family end to end, as a user runs it: what reaches
// the server, and the exit code each ending maps to.
func TestChatCompletionsFamilyEndToEnd(t *testing.T) {
	t.Parallel()
	recorded := func(name string) fakeprovider.Reply {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return fakeprovider.Reply{Body: string(b)}
	}

	t.Run("openrouter sends its attribution headers and the key", func(t *testing.T) {
		srv := fakeprovider.Start(fakeprovider.Reply{Text: "hi"})
		defer srv.Close()
		r := newWorld(t, nil).with("ASK_PROVIDER", "openrouter", "ASK_BASE_URL", srv.URL, "OPENROUTER_API_KEY", "or-key").ask("hello")
		if r.code != fault.ExitOK || r.answer() != "hi\n" {
			t.Fatalf("exit %d answer %q stderr %s", r.code, r.answer(), r.stderr)
		}
		h := srv.Headers()[0]
		for name, want := range map[string]string{"Authorization": "Bearer or-key", "Http-Referer": "https://github.com/ask-cli/ask", "X-Title": "ask"} {
			if got := h.Get(name); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
	})

	t.Run("an error inside a 200 stream exits 3", func(t *testing.T) {
		srv := fakeprovider.Start(recorded("openrouter-stream-error-in-200.sse"))
		defer srv.Close()
		r := newWorld(t, srv).ask("hello")
		if r.code != fault.ExitProvider {
			t.Fatalf("exit %d, want %d; stderr %s", r.code, fault.ExitProvider, r.stderr)
		}
		if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "Token limit reached") {
			t.Errorf("stderr %q: want one line carrying the provider's message", r.stderr)
		}
	})

	t.Run("the same call answered the same way five times in a row exits 5", func(t *testing.T) {
		same := fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c", "list_directory", `{"path":"."}`)}}
		srv := fakeprovider.Start(same, same, same, same, same, fakeprovider.Reply{Text: "never"})
		defer srv.Close()
		r := newWorld(t, srv).ask("look")
		if r.code != fault.ExitLimit || len(srv.Requests()) != 5 {
			t.Fatalf("exit %d after %d requests, want %d after 5; stderr %s", r.code, len(srv.Requests()), fault.ExitLimit, r.stderr)
		}
		if !strings.Contains(r.stderr, "same tool call, answered the same way, five times in a row") {
			t.Errorf("stderr %q does not say why the run stopped", r.stderr)
		}
	})

	t.Run("the first request with every built-in tool stays under 8 KB", func(t *testing.T) {
		srv := fakeprovider.Start(fakeprovider.Reply{Text: "ok"})
		defer srv.Close()
		r := newWorld(t, srv).ask("what does this project do?")
		if r.code != fault.ExitOK {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		body := srv.Requests()[0]
		if d := declaredNames(body); d != "read_file,list_directory,search,edit_file,write_file,shell" {
			t.Fatalf("declared %s, want all six built-ins", d)
		}
		if len(body) > 8<<10 {
			t.Errorf("first request is %d bytes, over the 8 KB budget", len(body))
		}
	})
}
