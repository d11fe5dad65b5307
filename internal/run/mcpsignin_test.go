package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/mcpauth"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/runtest"
)

// signedIn signs w in to srv, as ask mcp login does, with a browser that
// follows the redirect at once.
func signedIn(t *testing.T, w *world, srv *runtest.OAuthMCP, name string) *mcpauth.Grant {
	t.Helper()
	server, _ := mcpauth.Canonical(srv.URL)
	l := mcpauth.Login{Server: server, Name: name, Open: runtest.FollowRedirects, Wait: 10 * time.Second}
	g, err := l.Run(context.Background(), mcpauth.OpenStore(history.StateDir(func(k string) string { return w.vars[k] })))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A kept sign-in lets a run use the server's tools, and its tokens reach
// nothing but that server: not the transcript, not a command's
// environment, not a tool's output that reads the kept file, not a
// request to the model.
func TestMCPSignInTokensStayWithTheServer(t *testing.T) {
	t.Parallel()
	srv := runtest.StartOAuthMCP(t)
	w := newWorld(t, nil)
	w.environ = []string{"PATH=" + os.Getenv("PATH")}
	config := `{"mcpServers": {"work": {"url": "` + srv.URL + `"}}}`
	w.with("ASK_CONFIG", runtest.WriteConfig(t, t.TempDir(), config))
	g := signedIn(t, w, srv, "work")
	r, model, calls := askWhoAmI(t, w, "work", "")
	if c := calls["who"]; c.IsError || !strings.Contains(c.Content, "signed in as the test user") {
		t.Fatalf("whoami: %+v", c)
	}
	if c := calls["env"]; !strings.Contains(c.Content, `"server"`) {
		t.Fatalf("the shell call did not read the kept file: %+v", c)
	}
	noSecrets(t, r, model, append(g.Secrets(), srv.Access()))
}

// askWhoAmI runs w against a model that calls server's whoami tool (call
// "who") and a shell that prints its environment, the files named in
// also and the kept sign-ins (call "env"), and returns the run, the model
// and the calls by id.
func askWhoAmI(t *testing.T, w *world, server, also string) (ran, *fakeprovider.Server, map[string]loop.Call) {
	t.Helper()
	grantFiles := filepath.Join(history.StateDir(func(k string) string { return w.vars[k] }), "mcp-auth", "*.json")
	model := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("who", server+"__whoami", `{}`),
			fakeprovider.Call("env", "shell", `{"command":"env; cat `+strings.TrimSpace(also+" "+grantFiles)+`"}`),
		}},
		fakeprovider.Reply{Text: "done"})
	t.Cleanup(model.Close)
	w.with("ASK_PROVIDER", "openai", "ASK_BASE_URL", model.URL, "OPENAI_API_KEY", "fake-test-not-a-real-key-0000")
	r := w.ask("who am I?", "yes", true)
	if r.code != fault.ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	return r, model, callsByID(r.summary().ToolCalls)
}

// noSecrets fails t for each secret in the run's transcript, its stderr
// or a request to the model.
func noSecrets(t *testing.T, r ran, model *fakeprovider.Server, secrets []string) {
	t.Helper()
	for _, secret := range secrets {
		for what, text := range map[string]string{"the transcript": string(r.transcript), "stderr": r.stderr} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %.12s…", what, secret)
			}
		}
		for i, req := range model.Requests() {
			if strings.Contains(string(req), secret) {
				t.Errorf("request %d to the model holds %.12s…", i+1, secret)
			}
		}
	}
}

// A run never signs in: a config file's server with nothing kept is left
// out with a line naming the command to run, and the run goes on; a
// server --mcp named is an authentication failure, exit 4.
func TestMCPSignInMissing(t *testing.T) {
	t.Parallel()
	srv := runtest.StartOAuthMCP(t)
	model := fakeprovider.Start(fakeprovider.Reply{Text: "answered without it"}, fakeprovider.Reply{Text: "x"})
	defer model.Close()
	w := newWorld(t, model)
	w.with("ASK_CONFIG", runtest.WriteConfig(t, t.TempDir(), `{"mcpServers": {"work": {"url": "`+srv.URL+`"}}}`))
	r := w.ask("hi")
	if r.code != fault.ExitOK || !strings.Contains(r.stderr, "needs a sign-in") || !strings.Contains(r.stderr, "run ask mcp login work") {
		t.Errorf("config server: exit %d, stderr %s", r.code, r.stderr)
	}
	w2 := newWorld(t, model)
	r = w2.ask("hi", "mcp", srv.URL)
	if r.code != fault.ExitAuth || !strings.Contains(r.stderr, "ask mcp login "+srv.URL) {
		t.Errorf("--mcp server: exit %d, stderr %s", r.code, r.stderr)
	}
	for _, req := range srv.Requests {
		if strings.Contains(req, "/authorize") || strings.Contains(req, "/register") || strings.Contains(req, "/token") {
			t.Errorf("a run started a sign-in: %s", req)
		}
	}
}

// A sign-in through an enterprise identity provider: the run uses the
// kept token, and neither it, the kept ID token, nor the client secrets
// the config names by variable reach the transcript, a command's
// environment, a tool's output that reads the kept file, or the model.
func TestMCPEnterpriseSignInStaysWithTheServer(t *testing.T) {
	t.Parallel()
	e := runtest.StartEnterprise(t)
	w := newWorld(t, nil)
	w.environ = []string{"PATH=" + os.Getenv("PATH")}
	const idpSecret = "idp-client-secret-0000"
	// A file in the workdir holds the secrets the config names by
	// variable, as a careless checkout might: the tool that reads it must
	// not hand them on.
	if err := os.WriteFile(filepath.Join(w.wd, "notes.txt"), []byte(e.ClientSecret+"\n"+idpSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := `{"mcpServers": {"corp": {"url": "` + e.URL + `", "oauth": {"client_id": "` + e.ClientID +
		`", "client_secret": "${CORP_SECRET}", "idp_issuer": "` + e.IdPIssuer + `", "idp_client_id": "` + e.IdPClientID +
		`", "idp_client_secret": "${CORP_IDP_SECRET}"}}}}`
	w.with("ASK_CONFIG", runtest.WriteConfig(t, t.TempDir(), config), "CORP_SECRET", e.ClientSecret, "CORP_IDP_SECRET", idpSecret)
	server, _ := mcpauth.Canonical(e.URL)
	client := mcpauth.Client{ClientID: e.ClientID, ClientSecret: e.ClientSecret, IdPIssuer: e.IdPIssuer, IdPClientID: e.IdPClientID, IdPClientSecret: idpSecret}
	l := mcpauth.Login{Server: server, Name: "corp", Client: client, IDToken: e.IDToken()}
	g, err := l.Run(context.Background(), mcpauth.OpenStore(history.StateDir(func(k string) string { return w.vars[k] })))
	if err != nil {
		t.Fatal(err)
	}
	e.ExpireAccess() // the run gets its own token from the kept ID token
	r, model, calls := askWhoAmI(t, w, "corp", "notes.txt")
	if c := calls["who"]; c.IsError || !strings.Contains(c.Content, "signed in through the enterprise") {
		t.Fatalf("whoami: %+v", c)
	}
	if c := calls["env"]; !strings.Contains(c.Content, `"id_token"`) {
		t.Fatalf("the shell call did not read the kept file: %+v", c)
	}
	if n := e.Count(&e.Exchanges); n != 2 {
		t.Fatalf("%d exchanges at the provider, want the login's and the run's", n)
	}
	noSecrets(t, r, model, append(g.Secrets(), e.Access(), e.ClientSecret, idpSecret))
}

// A server that asks for more scopes mid-run (403 insufficient_scope)
// gets no browser from the run: the call fails, the person is told once
// to run ask mcp login, and that login asks for the scopes the server
// asked for, after which the call goes through.
func TestMCPSignInStepUp(t *testing.T) {
	t.Parallel()
	srv := runtest.StartOAuthMCP(t)
	w := newWorld(t, nil)
	w.with("ASK_CONFIG", runtest.WriteConfig(t, t.TempDir(), `{"mcpServers": {"work": {"url": "`+srv.URL+`"}}}`))
	signedIn(t, w, srv, "work")
	srv.NeedScopeToCall("admin")
	model := fakeprovider.StartFunc(func(body []byte) fakeprovider.Reply {
		if strings.Contains(string(body), `"role":"tool"`) {
			return fakeprovider.Reply{Text: "done"}
		}
		return fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("a", "work__whoami", `{}`), fakeprovider.Call("b", "work__whoami", `{}`)}}
	})
	defer model.Close()
	w.with("ASK_PROVIDER", "openai", "ASK_BASE_URL", model.URL, "OPENAI_API_KEY", "fake-test-not-a-real-key-0000")
	before := len(srv.Requests)
	r := w.ask("who am I?", "yes", true)
	if r.code != fault.ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	calls := callsByID(r.summary().ToolCalls)
	if c := calls["a"]; !c.IsError || !strings.Contains(c.Content, "run ask mcp login work") {
		t.Errorf("the refused call: %+v", c)
	}
	if n := strings.Count(r.stderr, "warning: work needs a sign-in (the server asks for scopes the kept sign-in lacks: admin"); n != 1 {
		t.Errorf("the warning was given %d times, want once: %s", n, r.stderr)
	}
	for _, req := range srv.Requests[before:] {
		if strings.Contains(req, "/authorize") || strings.Contains(req, "/register") {
			t.Errorf("the run started a sign-in: %s", req)
		}
	}
	signedIn(t, w, srv, "work") // asks for admin, kept from the run
	r = w.ask("who am I?", "yes", true)
	if c := callsByID(r.summary().ToolCalls)["a"]; c.IsError || !strings.Contains(c.Content, "signed in as the test user") {
		t.Errorf("after the new sign-in: %+v; stderr %s", c, r.stderr)
	}
}
