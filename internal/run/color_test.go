package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestColor(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(`{"color": "always"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	withFile := map[string]string{"ASK_CONFIG": path}
	for _, tt := range []struct {
		name       string
		flag       string
		given      bool
		vars       map[string]string
		mode, from string
	}{
		{"the flag wins", "never", true, map[string]string{"ASK_CONFIG": path, "NO_COLOR": "1"}, "never", "flag --color"},
		{"the flag wins over NO_COLOR", "always", true, map[string]string{"NO_COLOR": "1"}, "always", "flag --color"},
		{"NO_COLOR over the file", "", false, map[string]string{"ASK_CONFIG": path, "NO_COLOR": "1"}, "never", "env NO_COLOR"},
		{"the file", "", false, withFile, "always", "config " + path},
		{"the default", "", false, nil, "auto", "default"},
	} {
		getenv := env(tt.vars)
		mode, from := Color(tt.flag, tt.given, getenv, LoadConfig(getenv, "").Resolved)
		if mode != tt.mode || !strings.HasPrefix(from, tt.from) {
			t.Errorf("%s: %s from %q, want %s from %q", tt.name, mode, from, tt.mode, tt.from)
		}
	}
	if mode, from := Color("", false, env(nil), nil); mode != "auto" || from != "default" {
		t.Errorf("no config read: %s from %q, want auto from default", mode, from)
	}
}
