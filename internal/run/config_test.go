package run

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/runtest"
)

// The file's settings reach the requests: its provider, base URL, key,
// model and limits.
func TestConfigDrivesTheRun(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "from the fake"})
	defer srv.Close()
	home := t.TempDir()
	runtest.WriteConfig(t, home, fmt.Sprintf(`{
  "provider": "openai",
  "no_stream": true,
  "max_tokens": 77,
  "providers": {"openai": {"base_url": %q, "api_key": "fake-file-key-0000", "model": "model-from-file"}}
}`, srv.URL))
	r := newWorld(t, nil).with("HOME", home).ask("hello")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := r.summary(); got.Answer != "from the fake" || got.Model != "model-from-file" {
		t.Fatalf("--json = %+v", got)
	}
	var req struct {
		Model     string `json:"model"`
		Stream    bool   `json:"stream"`
		MaxTokens int    `json:"max_tokens"`
		MaxCompl  int    `json:"max_completion_tokens"`
	}
	json.Unmarshal(srv.Requests()[0], &req)
	if req.Model != "model-from-file" || req.Stream || (req.MaxTokens != 77 && req.MaxCompl != 77) {
		t.Errorf("request = %s", srv.Requests()[0])
	}
	if auth := srv.Headers()[0].Get("Authorization"); auth != "Bearer fake-file-key-0000" {
		t.Errorf("Authorization = %q, want the file's key", auth)
	}
	summary, _ := json.Marshal(r.summary())
	if strings.Contains(string(summary)+string(r.transcript)+r.stderr, "fake-file-key") {
		t.Errorf("the key was printed")
	}
}

func TestWarnsWhenTheKeyFileIsReadable(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "a"}, fakeprovider.Reply{Text: "b"})
	defer srv.Close()
	home := t.TempDir()
	path := runtest.WriteConfig(t, home, fmt.Sprintf(`{"provider": "openai", "providers": {"openai": {"base_url": %q, "api_key": "fake-x"}}}`, srv.URL))
	os.Chmod(path, 0o644)
	r := newWorld(t, nil).with("HOME", home).ask("q")
	if r.code != 0 || !strings.Contains(r.stderr, "holds an API key and others can read it: chmod 600") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestConfigShown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	there := filepath.Join(dir, "config.json")
	if err := os.WriteFile(there, []byte(`{"mode": "plan"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "none.json")
	for _, tt := range []struct {
		name string
		vars map[string]string
		want string
	}{
		{"a file", map[string]string{"ASK_CONFIG": there}, there},
		{"no file there", map[string]string{"ASK_CONFIG": missing}, missing + " (not found)"},
		{"no path", nil, "none (set HOME or ASK_CONFIG)"},
	} {
		if got := LoadConfig(env(tt.vars), "").Shown(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
