package providers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSniffReplyOnRecordedBodies reads every recorded reply of the shared
// fixtures, bodies and streams, and names its protocol: that of its
// provider's directory (the Chat Completions family for OpenRouter,
// DeepSeek, Moonshot and local servers, and for Ollama's /v1; the
// Responses API where a file says so).
func TestSniffReplyOnRecordedBodies(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "..", "shared", "fixtures")
	// A fresh clone has nothing beside it, and the README's test command
	// must pass there: the test is skipped when the fixtures are absent.
	if _, err := os.Stat(root); err != nil {
		t.Skipf("the shared fixtures are not beside the repository (put them at ../shared/fixtures to run this): %v", err)
	}
	dirs := map[string]string{
		"anthropic": "anthropic", "gemini": "gemini", "ollama": "ollama", "openai-responses": "responses",
		"openai-chat": "openai", "openrouter": "openai", "deepseek": "openai", "moonshot-kimi": "openai", "local-openai-compat": "openai",
	}
	seen := 0
	for dir, want := range dirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no fixtures in %s (the shared directory must be beside the repository): %v", dir, err)
		}
		for _, f := range files {
			name := filepath.Base(f)
			if strings.Contains(name, ".request.") || strings.Contains(name, "error") || strings.HasSuffix(name, ".md") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			expect := want
			switch {
			case strings.Contains(name, "openai-compat"):
				expect = "openai"
			case strings.Contains(name, "responses"): // OpenRouter's and others' Responses API
				expect = "responses"
			}
			if got := SniffReply(data); got != expect {
				t.Errorf("%s/%s: SniffReply = %q, want %q", dir, name, got, expect)
			}
			seen++
		}
	}
	if seen < 20 {
		t.Errorf("read only %d recorded replies", seen)
	}
}

func TestSniffReplyCannotTell(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "hello", `{"error":{"message":"bad"}}`, "[]", `{"a":1}`, "data: [DONE]\n"} {
		if got := SniffReply([]byte(in)); got != "" {
			t.Errorf("SniffReply(%q) = %q, want nothing", in, got)
		}
	}
}

func FuzzSniffReply(f *testing.F) {
	for _, s := range []string{`{"type":"message","content":[]}`, "data: {\"choices\":[]}\n\n", `[{"candidates":[]}]`, "{\n\"a\":\n1}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		switch SniffReply(data) {
		case "", "openai", "responses", "anthropic", "gemini", "ollama":
		default:
			t.Fatalf("SniffReply(%q) named no protocol of ask's", data)
		}
	})
}
