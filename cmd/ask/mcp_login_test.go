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

// ask mcp login --id-token-stdin signs in to a server behind an
// enterprise identity provider with an ID token the person already has:
// no browser; the token exchanged is kept, shown by no command; a token
// that is no JWT, or has expired, or a server with no identity provider,
// is a usage error naming what is wrong.
func TestMCPLoginWithAnIDToken(t *testing.T) {
	t.Parallel()
	e := runtest.StartEnterprise(t)
	home := t.TempDir()
	config := runtest.WriteConfig(t, home, `{"mcpServers": {"corp": {"url": "`+e.URL+`", "oauth": {"client_id": "`+e.ClientID+
		`", "client_secret": "${CORP_SECRET}", "idp_issuer": "`+e.IdPIssuer+`", "idp_client_id": "`+e.IdPClientID+`"}},
		"plain": {"url": "https://mcp.example.com/mcp", "oauth": {"client_id": "x"}}}}`)
	vars := map[string]string{"HOME": home, "XDG_STATE_HOME": filepath.Join(home, "state"), "ASK_CONFIG": config,
		"CORP_SECRET": e.ClientSecret, "BROWSER": "false", "PATH": os.Getenv("PATH")}
	idToken := e.IDToken()
	r := runAsk(t, askEnv{env: vars, stdin: idToken + "\n"}, "mcp", "login", "corp", "--id-token-stdin")
	if r.code != 0 || !strings.Contains(r.stderr, "signed in to corp") {
		t.Fatalf("login: exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "/authorize") {
		t.Errorf("a browser sign-in was started: %s", r.stderr)
	}
	token := e.Access()
	list := runAsk(t, askEnv{env: vars}, "mcp", "list", "--json", "--tools")
	cfg := runAsk(t, askEnv{env: vars}, "config", "--json")
	if !strings.Contains(list.stdout, `"signed in"`) || !strings.Contains(list.stdout, "whoami") {
		t.Errorf("mcp list --json --tools = %s; stderr %s", list.stdout, list.stderr)
	}
	for what, text := range map[string]string{"login": r.stdout + r.stderr, "mcp list": list.stdout + list.stderr, "ask config": cfg.stdout + cfg.stderr} {
		for _, secret := range []string{token, idToken, e.ClientSecret} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %.12s…", what, secret)
			}
		}
	}

	expired := runtest.FakeJWT(map[string]any{"exp": 1})
	for _, c := range []struct{ target, stdin, want string }{
		{"corp", "not a token", "the ID token: not a JWT"},
		{"corp", expired, "the ID token expired at 1970-01-01T00:00:01Z"},
		{"corp", " \n", "stdin holds no ID token"},
		{"corp", "", "--id-token-stdin reads the ID token from stdin: pipe it in"}, // stdin a terminal
		{"plain", idToken, "mcp server plain signs in without an identity provider"},
	} {
		r := runAsk(t, askEnv{env: vars, stdin: c.stdin}, "mcp", "login", c.target, "--id-token-stdin")
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("login %s with %q: exit %d: %s; want exit 2 and %q", c.target, c.stdin, r.code, r.stderr, c.want)
		}
	}
}
