package run

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/settings"
)

func configFrom(t *testing.T, path, text, profile string) *Config {
	t.Helper()
	f, err := config.Parse(path, []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.Resolve(profile)
	if err != nil {
		t.Fatal(err)
	}
	c := &Config{Path: path, File: f, Resolved: r, home: "/home/me"}
	if profile != "" {
		c.Profile = Given(profile, "flag --profile")
	}
	return c
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// The config file's values reach the settings they name, with the file
// as their source, and a relative path in the file is relative to it.
func TestResolveTakesTheConfigFile(t *testing.T) {
	t.Parallel()
	cfg := configFrom(t, "/c.json", `{"mode": "ask", "mcp": ["srv one"], "tools": {"allow": ["read_file"], "file": "t.json"}}`, "")
	s, err := Resolve(Inputs{Getenv: env(nil), Config: cfg, Wd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != Given("ask", "config /c.json") {
		t.Errorf("mode %+v", s.Mode)
	}
	if !reflect.DeepEqual(s.MCP, Given([]string{"srv one"}, "config /c.json")) {
		t.Errorf("mcp %+v", s.MCP)
	}
	if s.ToolsFile.Value != "/t.json" {
		t.Errorf("tools-file %q: a relative path is relative to the config file", s.ToolsFile.Value)
	}
	if !reflect.DeepEqual(s.Allow.Value, []string{"read_file"}) {
		t.Errorf("allow %+v", s.Allow)
	}
	if s.MaxSteps != Given(policy.DefaultMaxSteps("ask"), "default (mode ask)") {
		t.Errorf("max-steps %+v, want the default", s.MaxSteps)
	}
}

// Each layer beats the ones below it: flag > conversation > environment >
// config (profile over top level) > default, setting by setting.
func TestResolvePrecedence(t *testing.T) {
	t.Parallel()
	cfg := configFrom(t, "/c.json", `{"provider": "anthropic", "model": "m-file", "max_steps": 4, "timeout": "1m",
		"providers": {"openai": {"base_url": "http://file.example/v1"}}, "profiles": {"fast": {"max_steps": 2}}}`, "fast")
	flags := Settings{Values: settings.Values{Timeout: Given(30*time.Second, "flag --timeout")}}
	s, err := Resolve(Inputs{Flags: flags, Config: cfg, Getenv: env(map[string]string{
		"ASK_PROVIDER": "openai", "OPENAI_API_KEY": "fake-key",
	})})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		got, want any
	}{
		{"provider", s.Provider, Given("openai", "env ASK_PROVIDER")},
		// The top-level model belongs to the file's provider, not to one
		// the environment chose.
		{"model", s.Model, Given("gpt-4o-mini", "default")},
		{"base-url", s.BaseURL, Given("http://file.example/v1", "config /c.json")},
		{"max-steps", s.MaxSteps, Given(2, "config /c.json:fast")},
		{"timeout", s.Timeout, Given(30*time.Second, "flag --timeout")},
		{"key source", s.Key.Source, "env OPENAI_API_KEY"},
		{"profile", s.Profile, Given("fast", "flag --profile")},
	} {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s = %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
}

// A bad pattern in the file is reported where it was written.
func TestResolveBadPatternInConfig(t *testing.T) {
	t.Parallel()
	f, err := config.Parse("/c.json", []byte(`{"tools": {"deny": [":x"]}}`), nil)
	cfg := &Config{Path: "/c.json", File: f, Err: err}
	_, err = Resolve(Inputs{Getenv: env(nil), Config: cfg})
	if kind, _ := fault.KindOf(err); err == nil || kind != Usage || !strings.Contains(err.Error(), "/c.json:1:") || !strings.Contains(err.Error(), "has no tool name") {
		t.Errorf("err %v (kind %v), want a usage error at the file's line", err, kind)
	}
}

// Entries never show a key, only whether it is set and where.
func TestEntriesHideTheKey(t *testing.T) {
	t.Parallel()
	s, err := Resolve(Inputs{Getenv: env(map[string]string{"OPENAI_API_KEY": "fake-secret-9999"})})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Entries() {
		if strings.Contains(strings.ToLower(e.Name+" "+e.Source), "fake-secret") || e.Value == "fake-secret-9999" {
			t.Errorf("entry %+v shows the key", e)
		}
		if e.Name == "key" && (e.Value != "set" || e.Source != "env OPENAI_API_KEY") {
			t.Errorf("key entry %+v", e)
		}
	}
}
