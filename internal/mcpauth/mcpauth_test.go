package mcpauth

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/runtest"
)

func TestCanonical(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://MCP.Example.com/mcp/":        "https://mcp.example.com/mcp",
		"https://mcp.example.com:443/mcp?x=1": "https://mcp.example.com/mcp",
		"http://127.0.0.1:80/":                "http://127.0.0.1",
		"http://user:pw@host:8080/a#frag":     "http://host:8080/a",
		"http://[::1]:9000/mcp":               "http://[::1]:9000/mcp",
		" https://example.com/mcp ":           "https://example.com/mcp",
		"ftp://example.com/":                  "",
		"example.com/mcp":                     "",
		"https://":                            "",
	} {
		got, err := Canonical(in)
		if want == "" {
			if err == nil {
				t.Errorf("Canonical(%q) = %q, want an error", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func login(t *testing.T, srv *runtest.OAuthMCP, store Store) (*Grant, error) {
	t.Helper()
	server, _ := Canonical(srv.URL)
	var opened []string
	l := Login{Server: server, Name: "test", Version: "t", Wait: 10 * time.Second,
		Open: func(u string) error { opened = append(opened, u); return runtest.FollowRedirects(u) }}
	g, err := l.Run(context.Background(), store)
	if err == nil && len(opened) != 1 {
		t.Errorf("the browser was opened %d times, want once", len(opened))
	}
	return g, err
}

// A sign-in runs the whole flow (metadata, registration, PKCE, the
// resource parameter, the loopback redirect) and keeps the grant in a file
// only its owner can read.
func TestLoginKeepsTheGrant(t *testing.T) {
	t.Parallel()
	srv := runtest.StartOAuthMCP(t)
	store := OpenStore(filepath.Join(t.TempDir(), "ask"))
	g, err := login(t, srv, store)
	if err != nil {
		t.Fatal(err)
	}
	if g.AccessToken != srv.Access() || g.RefreshToken == "" || g.ClientID != "test-client" {
		t.Errorf("grant = %+v", g)
	}
	kept, err := store.Load(g.Server)
	if err != nil || kept == nil || kept.AccessToken != g.AccessToken {
		t.Fatalf("Load = %+v, %v", kept, err)
	}
	for path, want := range map[string]os.FileMode{store.Dir: 0o700, store.path(g.Server): 0o600} {
		info, err := os.Stat(path)
		if err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, info.Mode().Perm(), err, want)
		}
	}
}

// A grant is never written where a link points: a checkout or another
// user that plants one in the state directory gets nothing.
func TestSaveRefusesALinkedDirectory(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(state, "mcp-auth")); err != nil {
		t.Fatal(err)
	}
	store := OpenStore(state)
	err := store.Save(&Grant{Server: "https://example.com/mcp", AccessToken: "secret-token"})
	if err == nil {
		t.Fatal("a grant was kept through a symbolic link")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("%d files were written where the link points", len(entries))
	}
}

func TestLoadRefusesALinkedGrant(t *testing.T) {
	t.Parallel()
	store := OpenStore(t.TempDir())
	g := &Grant{Server: "https://example.com/mcp", AccessToken: "a"}
	if err := store.Save(g); err != nil {
		t.Fatal(err)
	}
	p := store.path(g.Server)
	other := filepath.Join(t.TempDir(), "x.json")
	os.Rename(p, other)
	os.Symlink(other, p)
	if _, err := store.Load(g.Server); err == nil {
		t.Error("a grant was read through a symbolic link")
	}
}

// A run uses the kept token, refreshes it once it has expired, keeps the
// new one, and never starts a sign-in: a refused token is a LoginNeeded
// naming the command to run.
func TestRunRefreshesAndNeverSignsIn(t *testing.T) {
	t.Parallel()
	srv := runtest.StartOAuthMCP(t)
	store := OpenStore(t.TempDir())
	g, err := login(t, srv, store)
	if err != nil {
		t.Fatal(err)
	}
	// The token has expired by the client's clock: the run refreshes it.
	g.Expiry = time.Now().Add(-time.Minute)
	if err := store.Save(g); err != nil {
		t.Fatal(err)
	}
	h, err := ForRun(store, g.Server, "test", Client{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	connect := func() error {
		c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
		s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL, OAuthHandler: h, MaxRetries: -1}, nil)
		if err == nil {
			s.Close()
		}
		return err
	}
	if err := connect(); err != nil {
		t.Fatalf("with a refreshable token: %v", err)
	}
	if srv.Refreshes != 1 {
		t.Errorf("%d refreshes, want 1", srv.Refreshes)
	}
	kept, _ := store.Load(g.Server)
	if kept.AccessToken != srv.Access() || kept.AccessToken == g.AccessToken {
		t.Errorf("the refreshed token was not kept: kept %q, server takes %q", kept.AccessToken, srv.Access())
	}
	// The server refuses the token now: the run does not sign in.
	srv.Expire()
	before := len(srv.Requests)
	err = connect()
	var need *LoginNeeded
	if !errors.As(err, &need) || !strings.Contains(err.Error(), "ask mcp login test") {
		t.Fatalf("with a refused token: %v, want LoginNeeded naming ask mcp login", err)
	}
	for _, r := range srv.Requests[before:] {
		if strings.Contains(r, "/authorize") || strings.Contains(r, "/register") {
			t.Errorf("the run started a sign-in: %s", r)
		}
	}
}

// With nothing kept for a server that wants OAuth, the run says which
// command signs in.
func TestRunWithoutASignIn(t *testing.T) {
	t.Parallel()
	srv := runtest.StartOAuthMCP(t)
	store := OpenStore(t.TempDir())
	server, _ := Canonical(srv.URL)
	h, err := ForRun(store, server, "work", Client{}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	_, err = c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL, OAuthHandler: h, MaxRetries: -1}, nil)
	var need *LoginNeeded
	if !errors.As(err, &need) || need.Label != "work" {
		t.Fatalf("err = %v, want LoginNeeded for work", err)
	}
}

func TestClientCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    Client
		want string
	}{
		{Client{}, ""},
		{Client{ClientID: "a", ClientSecret: "b", GrantType: "client_credentials"}, ""},
		{Client{GrantType: "client_credentials", ClientID: "a"}, "needs client_id and one of client_secret and private_key_file"},
		{Client{GrantType: "password"}, "choose authorization_code or client_credentials"},
		{Client{ClientSecret: "b"}, "client_secret without client_id"},
		{Client{MetadataURL: "http://example.com/c.json"}, "https://"},
	} {
		if got := tc.c.Check(); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v.Check() = %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestOpenBrowser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "opened")
	script := filepath.Join(dir, "browser")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"$@\" > "+out+"\n"), 0o755)
	env := map[string]string{"BROWSER": "/nonexistent/browser:" + script + " --new-window %s"}
	if err := OpenBrowser(func(k string) string { return env[k] }, "http://127.0.0.1:1/authorize?x=1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(out); err == nil && len(data) > 0 {
			if got := strings.TrimSpace(string(data)); got != "--new-window http://127.0.0.1:1/authorize?x=1" {
				t.Errorf("the browser got %q", got)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the second $BROWSER entry was not run")
}
