package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

var providerNames = []string{"anthropic", "ollama", "openai"}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name       string
		data       string
		line, col  int
		wantSubstr string
	}{
		{"unknown top-level key", "{\n  \"mdoe\": \"ask\"\n}", 2, 3, `unknown key "mdoe" at the top level: did you mean "mode"?`},
		{"unknown key far from any", `{"frobnicate": 1}`, 1, 2, `known keys are aliases, color, compact, compact_at, context_window, defer_tools, hooks, max_agents, max_budget_tokens, max_budget_usd, max_rounds, max_steps,`},
		{"unknown key in a profile", "{\"profiles\": {\"ci\": {\n\t\"mode\": \"ask\",\n\t\"yes\": true}}}", 3, 2, `unknown key "yes" in profiles.ci`},
		{"unknown key in tools", `{"tools": {"alow": []}}`, 1, 12, `unknown key "alow" in tools: did you mean "allow"?`},
		{"unknown key in a provider", `{"providers": {"openai": {"key": "x"}}}`, 1, 27, `unknown key "key" in providers.openai`},
		{"key differing in case", `{"Mode": "ask"}`, 1, 2, `unknown key "Mode"`},
		{"hooks in a profile", `{"profiles": {"a": {"hooks": {}}}}`, 1, 21, `"hooks" in profiles.a: belongs to the top level`},
		{"unknown hook event", `{"hooks": {"Notification": []}}`, 1, 12, `hooks.Notification: unknown hook event`},
		{"hook matcher not a regexp", `{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}}`, 1, 12, `hooks.PreToolUse: [0].matcher: "(" is not a regular expression`},
		{"unknown key in a hook", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "cmd": "x"}]}]}}`, 1, 52, `unknown key "cmd"`},
		{"price without output", `{"prices": {"m": {"input": 1}}}`, 1, 13, `prices.m: give "input" and "output"`},
		{"profiles do not nest", `{"profiles": {"a": {"profiles": {}}}}`, 1, 21, `unknown key "profiles" in profiles.a`},
		{"repeated key", "{\"mode\": \"ask\",\n \"mode\": \"plan\"}", 2, 2, `mode: appears twice`},
		{"syntax error", "{\n  \"mode\": \"ask\"\n  \"model\": \"x\"\n}", 3, 3, `not valid JSON`},
		{"comment", "{\n // no comments in JSON\n}", 2, 2, `not valid JSON`},
		{"truncated", "{\"mode\": ", 1, 10, `ends in the middle`},
		{"not an object", `["mode"]`, 1, 1, `must hold one JSON object`},
		{"text after the object", "{}\n{}", 2, 1, `unexpected text after`},
		{"wrong type", "{\n\"max_steps\": \"8\"}", 2, 1, `max_steps: want a whole number, got a string`},
		{"fraction", `{"max_steps": 1.5}`, 1, 2, `max_steps: want a whole number, got 1.5`},
		{"object for a string", `{"model": {}}`, 1, 2, `model: want a string, got an object`},
		{"list for an object", `{"tools": []}`, 1, 2, `tools: want an object, got a list`},
		{"wrong item type", `{"mcp": ["a", 1]}`, 1, 2, `mcp: want a string, got 1`},
		{"wrong type in a profile", `{"profiles": {"x": {"safe": "yes"}}}`, 1, 21, `profiles.x.safe: want true or false, got a string`},
		{"wrong list type", `{"tools": {"allow": "read_file"}}`, 1, 12, `tools.allow: want a list of strings, got a string`},
		{"null", `{"model": null}`, 1, 2, `model: null is not a setting`},
		{"bad mode", `{"mode": "yolo"}`, 1, 2, `mode: "yolo": choose ask, plan or agent`},
		{"bad mode in a profile", `{"profiles": {"p": {"mode": "x"}}}`, 1, 21, `profiles.p.mode: "x": choose ask, plan or agent`},
		{"bad tool protocol", `{"tool_protocol": "xml"}`, 1, 2, `choose auto, native, json or markdown`},
		{"bad colour", `{"color": "blue"}`, 1, 2, `choose auto, always or never`},
		{"unknown provider", `{"provider": "openia"}`, 1, 2, `provider: "openia": choose anthropic, ollama or openai`},
		{"unknown provider section", `{"providers": {"nope": {}}}`, 1, 16, `unknown provider "nope"`},
		{"max steps below one", `{"max_steps": 0}`, 1, 2, `max_steps: must be at least 1`},
		{"negative retries", `{"retries": -1}`, 1, 2, `retries: must be 0 or more`},
		{"max tokens below one", `{"max_tokens": 0}`, 1, 2, `max_tokens: must be at least 1`},
		{"bad timeout", `{"timeout": "5 minutes"}`, 1, 2, `timeout: "5 minutes": give a duration such as 30s or 5m, or 0 for none`},
		{"negative timeout", `{"timeout": "-1s"}`, 1, 2, `"-1s": give a duration such as 30s or 5m, or 0 for none`},
		{"empty model", `{"model": ""}`, 1, 2, `model: is empty`},
		{"empty mcp server", `{"mcp": ["srv", " "]}`, 1, 2, `mcp: server 2 is empty`},
		{"empty profile name", `{"profiles": {"": {}}}`, 1, 2, `a profile needs a name`},
		{"temperature as a string", `{"temperature": "hot"}`, 1, 2, `temperature: want a number, got a string`},
		{"temperature out of range", `{"temperature": 2.5}`, 1, 2, `temperature: 2.5: give a number from 0 to 2`},
		{"negative temperature in a profile", `{"profiles": {"p": {"temperature": -1}}}`, 1, 21, `profiles.p.temperature: -1: give a number from 0 to 2`},
		{"bad reasoning level", `{"reasoning": "max"}`, 1, 2, `reasoning: "max": choose low, medium or high`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("/cfg/config.json", []byte(tt.data), providerNames)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T), want a *config.Error", err, err)
			}
			if ce.Line != tt.line || ce.Column != tt.col {
				t.Errorf("at %d:%d, want %d:%d (%v)", ce.Line, ce.Column, tt.line, tt.col, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantSubstr) {
				t.Errorf("error %q lacks %q", msg, tt.wantSubstr)
			}
			if want := fmt.Sprintf("config file /cfg/config.json:%d:%d: ", tt.line, tt.col); !strings.HasPrefix(msg, want) {
				t.Errorf("error %q does not start with %q", msg, want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

// A key pasted into key_env must not be echoed by the error.
func TestKeyEnvErrorHidesTheValue(t *testing.T) {
	_, err := Parse("c.json", []byte(`{"providers": {"openai": {"key_env": "fake-proj-secret123"}}}`), providerNames)
	if err == nil || !strings.Contains(err.Error(), "providers.openai.key_env: must be the name of an environment variable") {
		t.Fatalf("error = %v", err)
	}
	if strings.Contains(err.Error(), "secret123") {
		t.Errorf("error shows the value: %v", err)
	}
}

func TestParseValid(t *testing.T) {
	data := `{
  "provider": "anthropic",
  "model": "claude-x",
  "mode": "plan",
  "safe": false,
  "max_steps": 12,
  "timeout": "10m",
  "tool_protocol": "json",
  "no_stream": true,
  "retries": 0,
  "max_tokens": 500,
  "color": "never",
  "providers": {"openai": {"base_url": "http://proxy/v1", "key_env": "WORK_KEY", "api_key": "fake-file", "model": "gpt-x"}},
  "tools": {"allow": ["read_file"], "deny": ["shell:rm *"], "yes": true, "file": "tools.json"},
  "mcp": ["srv --flag"],
  "profiles": {"ci": {"mode": "ask"}}
}`
	f, err := Parse("c.json", []byte(data), providerNames)
	if err != nil {
		t.Fatal(err)
	}
	want := Layer{
		Values: map[string]any{"provider": "anthropic", "model": "claude-x", "mode": "plan", "safe": false, "max_steps": 12,
			"timeout": 10 * time.Minute, "tool_protocol": "json", "no_stream": true, "retries": 0, "max_tokens": 500, "color": "never",
			"tools.allow": []string{"read_file"}, "tools.deny": []string{"shell:rm *"}, "tools.yes": true, "tools.file": "tools.json",
			"mcp": []string{"srv --flag"}},
		Providers: map[string]Provider{"openai": {BaseURL: "http://proxy/v1", KeyEnv: "WORK_KEY", APIKey: "fake-file", Model: "gpt-x"}},
	}
	if !reflect.DeepEqual(f.Layer, want) {
		t.Errorf("settings\n got %+v\nwant %+v", f.Layer, want)
	}
	if got := f.ProfileNames(); !reflect.DeepEqual(got, []string{"ci"}) {
		t.Errorf("profiles %v", got)
	}
}

func TestResolveProfiles(t *testing.T) {
	data := `{
  "provider": "openai",
  "model": "gpt-x",
  "mode": "agent",
  "safe": true,
  "providers": {"openai": {"base_url": "http://top/v1", "key_env": "TOP_KEY"}},
  "tools": {"allow": ["read_file", "list_directory"], "yes": true},
  "profiles": {
    "ci": {"mode": "ask", "safe": false, "tools": {"allow": []}, "providers": {"openai": {"base_url": "http://ci/v1"}}},
    "local": {"provider": "ollama", "providers": {"ollama": {"model": "qwen3"}}}
  }
}`
	f, err := Parse("/c.json", []byte(data), providerNames)
	if err != nil {
		t.Fatal(err)
	}
	top, err := f.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := f.Resolve("ci")
	if err != nil {
		t.Fatal(err)
	}
	local, err := f.Resolve("local")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		got    any
		want   any
		source string // of the key named in name, for *Resolved
		r      *Resolved
	}{
		{"mode", value(ci, "mode"), "ask", "/c.json:ci", ci},
		{"mode", value(top, "mode"), "agent", "/c.json", top},
		{"safe", value(ci, "safe"), false, "/c.json:ci", ci}, // false in a profile overrides true
		{"tools.allow", value(ci, "tools.allow"), []string{}, "/c.json:ci", ci},
		{"tools.yes", value(ci, "tools.yes"), true, "/c.json", ci},
		{"providers.openai.base_url", ci.Providers["openai"].BaseURL, "http://ci/v1", "/c.json:ci", ci},
		{"providers.openai.key_env", ci.Providers["openai"].KeyEnv, "TOP_KEY", "/c.json", ci},
		{"provider", value(local, "provider"), "ollama", "/c.json:local", local},
		{"model", value(local, "model"), "gpt-x", "/c.json", local},
		{"timeout", value(ci, "timeout"), nil, "", ci},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s (profile %q) = %#v, want %#v", tt.name, tt.r.Profile(), tt.got, tt.want)
		}
		if got := tt.r.Source(tt.name); got != tt.source {
			t.Errorf("source of %s (profile %q) = %q, want %q", tt.name, tt.r.Profile(), got, tt.source)
		}
	}
	// The merge must not change the file's own settings.
	if f.Providers["openai"].BaseURL != "http://top/v1" || len(f.Values["tools.allow"].([]string)) != 2 {
		t.Errorf("resolving changed the file: %+v", f.Layer)
	}

	models := []struct {
		r        *Resolved
		provider string
		model    string
		key      string
	}{
		{top, "openai", "gpt-x", "model"},
		{top, "anthropic", "", ""}, // the top-level model belongs to openai
		{local, "ollama", "qwen3", "providers.ollama.model"},
		{local, "openai", "", ""},
	}
	for _, m := range models {
		model, key := m.r.ModelFor(m.provider)
		if model != m.model || key != m.key {
			t.Errorf("ModelFor(%s) in %q = %q, %q; want %q, %q", m.provider, m.r.Profile(), model, key, m.model, m.key)
		}
	}

	if _, err := f.Resolve("nope"); err == nil || !strings.Contains(err.Error(), `no profile "nope": choose ci or local`) {
		t.Errorf("unknown profile: %v", err)
	}
	if err := ci.Errorf("mode", "bad"); !strings.Contains(err.Error(), "/c.json:") || !strings.Contains(err.Error(), "profiles.ci.mode: bad") {
		t.Errorf("Errorf = %v", err)
	}
}

func value(r *Resolved, key string) any {
	v, _ := r.Value(key)
	return v
}

func TestPath(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"ASK_CONFIG": "/etc/ask.json", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/etc/ask.json"},
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/ask/config.json"},
		{map[string]string{"XDG_CONFIG_HOME": "relative", "HOME": "/h"}, "/h/.config/ask/config.json"},
		{map[string]string{"HOME": "/h"}, "/h/.config/ask/config.json"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		if got := Path(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("Path(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.json")
	f, err := Load(missing, false, nil)
	if err != nil || f.Found() || f.Name() != missing {
		t.Errorf("missing file: %v, found=%v", err, f != nil && f.Found())
	}
	if _, err := Load(missing, true, nil); err == nil || err.Error() != "config file "+missing+": cannot be read: no such file or directory (ASK_CONFIG names it)" {
		t.Errorf("missing file named by the user: %v", err)
	}
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte("\n"), 0o600)
	if f, err := Load(empty, true, nil); err != nil || !f.Found() || len(f.Values) != 0 {
		t.Errorf("empty file: %v", err)
	}
	if f, err := Load("/dev/null", true, nil); err != nil || len(f.Values) != 0 {
		t.Errorf("/dev/null: %v", err)
	}
	none, err := Load("", false, nil)
	if err != nil || none.Found() {
		t.Errorf("no path: %v", err)
	}
	if r, _ := none.Resolve(""); r.Path("tools.json", "/h") != "tools.json" {
		t.Errorf("a file without a path resolves paths as they are")
	}
}

func TestResolvedPath(t *testing.T) {
	f, err := Parse("/etc/ask/config.json", []byte(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := f.Resolve("")
	tests := map[string]string{
		"tools.json":  "/etc/ask/tools.json",
		"/abs/t.json": "/abs/t.json",
		"~/t.json":    "/home/me/t.json",
		"":            "",
	}
	for in, want := range tests {
		if got := r.Path(in, "/home/me"); got != want {
			t.Errorf("Path(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretNeverPrints(t *testing.T) {
	p := Provider{KeyEnv: "K", APIKey: "fake-very-secret"}
	b, _ := json.Marshal(p)
	for _, s := range []string{fmt.Sprintf("%v", p), fmt.Sprintf("%+v", p), fmt.Sprintf("%#v", p), fmt.Sprint(p.APIKey), string(b)} {
		if strings.Contains(s, "very-secret") {
			t.Errorf("secret shown: %s", s)
		}
	}
	if p.APIKey.Reveal() != "fake-very-secret" {
		t.Error("Reveal lost the value")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`{"provider":"openai","profiles":{"a":{"mode":"ask","tools":{"allow":["x"]}}}}`)
	f.Add(`{"providers":{"openai":{"key_env":"K"}},"mcp":["a"],"timeout":"1s","max_steps":2}`)
	f.Add("{\n\"mode\": \"ask\",\n\"mode\": 1}")
	f.Add(`{"tools":{"allow":[{"x":1}]}}`)
	f.Add(`[`)
	f.Add(`{"mcpServers":{"fs":{"command":"npx","args":["-y","x"],"env":{"K":"${env:V}"},"sandbox":true},"r":{"url":"https://e.com/mcp","headers":{"Authorization":"Bearer ${T}"},"type":"sse","disabled":true}}}`)
	f.Add(`{"mcpServers":{"x":{"command":"a","url":"http://u:p@h"}}}`)
	f.Add(`{"mcpServers":{"a\nb":{}}}`)
	f.Fuzz(func(t *testing.T, data string) {
		file, err := Parse("f.json", []byte(data), providerNames)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *config.Error", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		for _, name := range append(file.ProfileNames(), "") {
			if _, err := file.Resolve(name); err != nil {
				t.Fatalf("Resolve(%q): %v", name, err)
			}
		}
	})
}

// The config file's variable names are the shell's, as mvdan.cc/sh reads
// them.
func TestIsEnvName(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	for _, s := range []string{"", "A", "_", "a1", "1a", "OPENAI_API_KEY", "A-B", "A B", "é", "a=", "Z9_z", "9"} {
		if got, want := syntax.ValidName(s), re.MatchString(s); got != want {
			t.Errorf("syntax.ValidName(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestMCPOAuthPrivateKey(t *testing.T) {
	server := func(oauth string) string {
		return `{"mcpServers": {"s": {"url": "https://mcp.example/mcp", "oauth": ` + oauth + `}}}`
	}
	for _, tt := range []struct{ oauth, want string }{
		{`{"grant_type": "client_credentials", "client_id": "a", "private_key_file": "/k.pem"}`, ""},
		{`{"grant_type": "client_credentials", "client_id": "a", "private_key_file": "/k.pem", "signing_algorithm": "RS256"}`, ""},
		{`{"grant_type": "client_credentials", "client_id": "a", "private_key_file": "/k.pem", "client_secret": "s"}`, "one of client_secret and private_key_file"},
		{`{"client_id": "a", "private_key_file": "/k.pem"}`, `private_key_file: goes only with grant_type "client_credentials"`},
		{`{"grant_type": "client_credentials", "client_id": "a", "private_key_file": "/k.pem", "signing_algorithm": "HS256"}`, `signing_algorithm: "HS256": choose ES256 or RS256`},
		{`{"grant_type": "client_credentials", "client_id": "a", "client_secret": "s", "signing_algorithm": "ES256"}`, "signing_algorithm: needs private_key_file beside it"},
	} {
		_, err := Parse("/cfg/config.json", []byte(server(tt.oauth)), providerNames)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.oauth, err, tt.want)
		}
	}
}

// A server signed in to through an enterprise identity provider: the
// provider's issuer and ask's client there, beside ask's client at the
// server's authorization server.
func TestMCPOAuthIdentityProvider(t *testing.T) {
	server := func(oauth string) string {
		return `{"mcpServers": {"s": {"url": "https://mcp.example/mcp", "oauth": ` + oauth + `}}}`
	}
	for _, tt := range []struct{ oauth, want string }{
		{`{"client_id": "a", "client_secret": "${S}", "idp_issuer": "https://idp.example", "idp_client_id": "i"}`, ""},
		{`{"client_id": "a", "idp_issuer": "https://idp.example/tenant", "idp_client_id": "i", "idp_client_secret": "${IDP_SECRET}"}`, ""},
		{`{"client_id": "a", "idp_issuer": "http://127.0.0.1:8080", "idp_client_id": "i"}`, ""},
		{`{"client_id": "a", "idp_issuer": "http://idp.example", "idp_client_id": "i"}`, "idp_issuer: must be the identity provider's issuer: an https:// URL"},
		{`{"client_id": "a", "idp_issuer": "idp.example", "idp_client_id": "i"}`, "idp_issuer: must be"},
		{`{"client_id": "a", "idp_client_id": "i"}`, "idp_client_id: needs idp_issuer beside it"},
		{`{"client_id": "a", "idp_client_secret": "x"}`, "idp_client_secret: needs idp_issuer beside it"},
		{`{"idp_issuer": "https://idp.example", "idp_client_id": "i"}`, "idp_issuer needs client_id"},
		{`{"client_id": "a", "idp_issuer": "https://idp.example"}`, "and idp_client_id"},
		{`{"grant_type": "authorization_code", "client_id": "a", "idp_issuer": "https://idp.example", "idp_client_id": "i"}`, "grant_type: goes not with idp_issuer"},
		{`{"client_id": "a", "client_metadata_url": "https://c.example/m.json", "idp_issuer": "https://idp.example", "idp_client_id": "i"}`, "client_metadata_url: goes not with idp_issuer"},
	} {
		_, err := Parse("/cfg/config.json", []byte(server(tt.oauth)), providerNames)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.oauth, err, tt.want)
		}
	}
}
