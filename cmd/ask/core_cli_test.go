package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// The Chat Completions family end to end, as a user runs it: what reaches
// the server, and the exit code each ending maps to.
func TestChatCompletionsFamilyEndToEnd(t *testing.T) {
	t.Parallel()
	recorded := func(name string) fakeprovider.Reply {
		b, err := os.ReadFile(filepath.Join("testdata", "stages", "fixtures", "openrouter", name))
		if err != nil {
			t.Fatal(err)
		}
		return fakeprovider.Reply{Body: string(b)}
	}

	t.Run("openrouter sends its attribution headers and the key", func(t *testing.T) {
		srv := fakeprovider.Start(fakeprovider.Reply{Text: "hi"})
		defer srv.Close()
		r := runAsk(t, askEnv{env: map[string]string{"ASK_PROVIDER": "openrouter", "ASK_BASE_URL": srv.URL, "OPENROUTER_API_KEY": "or-key"}}, "hello")
		if r.code != exitOK || r.stdout != "hi\n" {
			t.Fatalf("exit %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
		}
		h := srv.Headers()[0]
		for name, want := range map[string]string{"Authorization": "Bearer or-key", "Http-Referer": "https://github.com/ask-cli/ask", "X-Title": "ask"} {
			if got := h.Get(name); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
	})

	t.Run("an error inside a 200 stream exits 3", func(t *testing.T) {
		srv := fakeprovider.Start(recorded("pydantic-stream-error-in-200.sse"))
		defer srv.Close()
		r := runAsk(t, askEnv{server: srv}, "hello")
		if r.code != exitProvider {
			t.Fatalf("exit %d, want %d; stderr %s", r.code, exitProvider, r.stderr)
		}
		if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "Token limit reached") {
			t.Errorf("stderr %q: want one line carrying the provider's message", r.stderr)
		}
	})

	t.Run("the same call answered the same way five times in a row exits 5", func(t *testing.T) {
		same := fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c", "list_directory", `{"path":"."}`)}}
		srv := fakeprovider.Start(same, same, same, same, same, fakeprovider.Reply{Text: "never"})
		defer srv.Close()
		r := runAsk(t, askEnv{server: srv, wd: t.TempDir()}, "look")
		if r.code != exitLimit || len(srv.Requests()) != 5 {
			t.Fatalf("exit %d after %d requests, want %d after 5; stderr %s", r.code, len(srv.Requests()), exitLimit, r.stderr)
		}
		if !strings.Contains(r.stderr, "same tool call, answered the same way, five times in a row") {
			t.Errorf("stderr %q does not say why the run stopped", r.stderr)
		}
	})

	t.Run("the first request with every built-in tool stays under 8 KB", func(t *testing.T) {
		srv := fakeprovider.Start(fakeprovider.Reply{Text: "ok"})
		defer srv.Close()
		r := runAsk(t, askEnv{server: srv, wd: t.TempDir()}, "what does this project do?")
		if r.code != exitOK {
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

// An unknown flag is a usage error whose hint names the whole command.
func TestUnknownFlagNamesTheCommand(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		hint string
	}{
		{[]string{"--nope", "q"}, ": see ask --help"},
		{[]string{"replay", "--nope"}, ": see ask replay --help"},
		{[]string{"provider", "format-tools", "--nope"}, ": see ask provider format-tools --help"},
		{[]string{"tools", "run", "--nope"}, ": see ask tools run --help"},
		{[]string{"tools", "run", "--timout", "1s"}, "--timout: did you mean --timeout?"},
		{[]string{"replay", "--chek"}, "--chek: did you mean --check?"},
	} {
		r := runAsk(t, askEnv{stdin: "[]"}, tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "unknown flag --") || !strings.HasSuffix(strings.TrimSpace(r.stderr), tt.hint) {
			t.Errorf("ask %s: exit %d, stderr %q; want %d ending %q", strings.Join(tt.args, " "), r.code, r.stderr, exitUsage, tt.hint)
		}
	}
}
