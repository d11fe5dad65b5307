package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each provider is listed as a run with -p NAME would have it: the config
// file's base URL (its password hidden), key variable and model, and
// whether that key is set.
func TestProvidersAsARunHasThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	conf := `{"providers": {"openai": {"base_url": "http://user:secret@proxy.example/v1", "key_env": "WORK_KEY", "model": "gpt-from-config"}}}`
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := env(map[string]string{"ASK_CONFIG": path, "WORK_KEY": "fake-test-work-key", "ANTHROPIC_API_KEY": "fake-test-key"})
	rows, err := Providers(Inputs{Getenv: getenv, Config: LoadConfig(getenv, ""), Wd: dir})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Name] = true
		switch r.Name {
		case "openai":
			if strings.Contains(r.BaseURL, "secret") || !strings.Contains(r.BaseURL, "proxy.example/v1") {
				t.Errorf("openai base URL %q, want the config file's with its password hidden", r.BaseURL)
			}
			if len(r.KeyEnv) != 1 || r.KeyEnv[0] != "WORK_KEY" || !r.KeySet || r.Model != "gpt-from-config" {
				t.Errorf("openai: key env %v (set %v), model %q; want the config file's", r.KeyEnv, r.KeySet, r.Model)
			}
		case "anthropic":
			if !r.KeySet {
				t.Errorf("anthropic: the key in ANTHROPIC_API_KEY is not seen")
			}
		case "gemini":
			if r.KeySet {
				t.Errorf("gemini: a key is set where none is")
			}
		}
	}
	for _, name := range []string{"openai", "anthropic", "gemini"} {
		if !seen[name] {
			t.Errorf("%s is not listed", name)
		}
	}
}
