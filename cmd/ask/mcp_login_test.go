package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/runtest"
)

// ask mcp login signs in through the browser ($BROWSER: here a program
// that follows the redirect as a person signing in would), always prints
// the URL too, and keeps the sign-in; mcp list then says so, and neither
// it nor ask config shows a token; logout forgets it.
func TestMCPLoginListLogout(t *testing.T) {
	t.Parallel()
	srv := runtest.StartOAuthMCP(t)
	home := t.TempDir()
	config := runtest.WriteConfig(t, home, `{"mcpServers": {"work": {"url": "`+srv.URL+`", "oauth": {"scopes": ["read"]}}}}`)
	env := askEnv{env: map[string]string{"HOME": home, "XDG_STATE_HOME": filepath.Join(home, "state"), "ASK_CONFIG": config,
		"BROWSER": "browserfollow", "PATH": os.Getenv("PATH")}}

	list := func() string {
		r := runAsk(t, env, "mcp", "list")
		if r.code != 0 {
			t.Fatalf("mcp list: exit %d: %s", r.code, r.stderr)
		}
		return r.stdout
	}
	if out := list(); !strings.Contains(out, "login needed: ask mcp login work") {
		t.Errorf("before login, mcp list = %q", out)
	}
	r := runAsk(t, env, "mcp", "login", "work")
	if r.code != 0 {
		t.Fatalf("mcp login: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "/authorize?") || !strings.Contains(r.stderr, "signed in to work") {
		t.Errorf("login's stderr does not show the URL and the outcome: %s", r.stderr)
	}
	token := srv.Access()
	if token == "" {
		t.Fatal("no token was issued")
	}
	out := list()
	if !strings.Contains(out, "signed in") {
		t.Errorf("after login, mcp list = %q", out)
	}
	js := runAsk(t, env, "mcp", "list", "--json", "--tools")
	var entries []struct {
		SignIn string `json:"sign_in"`
		Tools  []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(js.stdout), &entries); err != nil || len(entries) != 1 || entries[0].SignIn != "signed in" || len(entries[0].Tools) != 1 {
		t.Errorf("mcp list --json --tools = %s (%v); stderr %s", js.stdout, err, js.stderr)
	}
	cfg := runAsk(t, env, "config", "--json")
	for what, text := range map[string]string{"mcp list": out + js.stdout, "ask config": cfg.stdout + cfg.stderr, "login": r.stdout + r.stderr} {
		if strings.Contains(text, token) {
			t.Errorf("%s shows the token", what)
		}
	}
	r = runAsk(t, env, "mcp", "logout", "work")
	if r.code != 0 || !strings.Contains(r.stderr, "forgot the sign-in for work") {
		t.Errorf("logout: exit %d: %s", r.code, r.stderr)
	}
	if out := list(); !strings.Contains(out, "login needed") {
		t.Errorf("after logout, mcp list = %q", out)
	}
	r = runAsk(t, env, "mcp", "login", "nonesuch")
	if r.code != 2 || !strings.Contains(r.stderr, `"nonesuch" is neither a server of the config file's mcpServers nor an http:// or https:// URL`) {
		t.Errorf("login of an unknown name: exit %d: %s", r.code, r.stderr)
	}
}
