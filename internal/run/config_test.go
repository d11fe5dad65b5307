package run

import (
	"os"
	"path/filepath"
	"testing"
)

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
