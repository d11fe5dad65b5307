package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/ask-cli/ask/internal/runtest"
)

func enterpriseClient(e *runtest.Enterprise) Client {
	return Client{ClientID: e.ClientID, ClientSecret: e.ClientSecret, IdPIssuer: e.IdPIssuer, IdPClientID: e.IdPClientID}
}

// enterpriseSignIn signs in to e, with idToken when given, else in the
// browser (a person who signs in at once).
func enterpriseSignIn(t *testing.T, e *runtest.Enterprise, store Store, idToken string) (*Grant, []string, error) {
	t.Helper()
	server, _ := Canonical(e.URL)
	var opened []string
	l := Login{Server: server, Name: "corp", Version: "t", Wait: 10 * time.Second, Client: enterpriseClient(e), IDToken: idToken,
		Open: func(u string) error { opened = append(opened, u); return runtest.FollowRedirects(u) }}
	g, err := l.Run(context.Background(), store)
	return g, opened, err
}

// connectWith connects to url with h, as a run does.
func connectWith(url string, h auth.OAuthHandler) error {
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, OAuthHandler: h, MaxRetries: -1}, nil)
	if err == nil {
		s.Close()
	}
	return err
}

// An ID token given to the login is exchanged at the provider for an
// ID-JAG naming the server's authorization server and the server, and
// that for the server's token, with the client authenticated as the
// authorization server's metadata asks (HTTP Basic); no browser opens.
// What is kept gets the next token with no person: the ID token.
func TestEnterpriseLoginWithAnIDToken(t *testing.T) {
	t.Parallel()
	e := runtest.StartEnterprise(t)
	store := OpenStore(t.TempDir())
	id := e.IDToken()
	g, opened, err := enterpriseSignIn(t, e, store, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(opened) != 0 {
		t.Errorf("a browser was opened: %v", opened)
	}
	if g.AccessToken == "" || g.AccessToken != e.Access() {
		t.Errorf("the kept token %q is not the one the server takes (%q)", g.AccessToken, e.Access())
	}
	if g.IDToken != id || g.Issuer != e.Issuer || g.Resource != e.URL || g.TokenURL != e.Issuer+"/token" {
		t.Errorf("grant = %+v", g)
	}
	if n := e.Count(&e.Exchanges); n != 1 {
		t.Errorf("%d exchanges at the provider, want 1", n)
	}
	kept, err := store.Load(g.Server)
	if err != nil || kept == nil || kept.IDToken != id {
		t.Fatalf("Load = %+v, %v", kept, err)
	}
	for _, s := range []string{g.AccessToken, id} {
		found := false
		for _, secret := range g.Secrets() {
			found = found || secret == s
		}
		if !found {
			t.Errorf("Secrets() leaves out %q", s)
		}
	}
}

// Without an ID token the person signs in at the provider in the
// browser (OpenID Connect with PKCE, back to the loopback port), and the
// provider's refresh token is kept for later runs.
func TestEnterpriseLoginInTheBrowser(t *testing.T) {
	t.Parallel()
	e := runtest.StartEnterprise(t)
	store := OpenStore(t.TempDir())
	g, opened, err := enterpriseSignIn(t, e, store, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(opened) != 1 || !strings.HasPrefix(opened[0], e.IdPIssuer+"/authorize?") {
		t.Errorf("opened %v, want the provider's authorization URL once", opened)
	}
	if !strings.Contains(opened[0], "offline_access") {
		t.Errorf("the sign-in did not ask for offline_access, which the provider offers: %s", opened[0])
	}
	if g.IDToken == "" || g.IdPRefreshToken == "" || g.AccessToken != e.Access() {
		t.Errorf("grant = %+v", g)
	}
}

// A kept token that has expired is renewed in the run with no person:
// the kept ID token exchanged again while it lasts, else a new one from
// the provider's refresh token; the new token is kept. What cannot be
// renewed is a LoginNeeded naming ask mcp login, and nothing in the run
// opens the provider's sign-in.
func TestEnterpriseRunRenews(t *testing.T) {
	t.Parallel()
	e := runtest.StartEnterprise(t)
	store := OpenStore(t.TempDir())
	g, _, err := enterpriseSignIn(t, e, store, "")
	if err != nil {
		t.Fatal(err)
	}
	run := func() error {
		h, err := ForRun(store, g.Server, "corp", enterpriseClient(e), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := h.(*enterpriseRun); !ok {
			t.Fatalf("ForRun gave a %T", h)
		}
		return connectWith(e.URL, h)
	}
	if err := run(); err != nil {
		t.Fatalf("with the kept token: %v", err)
	}
	if n := e.Count(&e.Exchanges); n != 1 {
		t.Errorf("the kept token was not used: %d exchanges", n)
	}

	// The server refuses the kept token: the kept ID token gets another.
	e.ExpireAccess()
	if err := run(); err != nil {
		t.Fatalf("after the server refused the kept token: %v", err)
	}
	if n := e.Count(&e.Exchanges); n != 2 {
		t.Errorf("%d exchanges, want 2", n)
	}
	if kept, _ := store.Load(g.Server); kept.AccessToken != e.Access() {
		t.Errorf("the renewed token was not kept")
	}

	// The kept ID token has expired: the provider's refresh token gets a
	// new one, which is exchanged.
	kept, _ := store.Load(g.Server)
	kept.IDToken = runtest.FakeJWT(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})
	kept.Expiry = time.Now().Add(-time.Minute)
	store.Save(kept)
	if err := run(); err != nil {
		t.Fatalf("with an expired ID token and the provider's refresh token: %v", err)
	}
	if n := e.Count(&e.IdPRefreshes); n != 1 {
		t.Errorf("%d refreshes at the provider, want 1", n)
	}

	// The provider's policy refuses the exchange now: a LoginNeeded.
	e.Set(func(e *runtest.Enterprise) { e.Deny = true })
	e.ExpireAccess()
	err = run()
	var need *LoginNeeded
	if !errors.As(err, &need) || !strings.Contains(err.Error(), "ask mcp login corp") || !strings.Contains(need.Reason, "invalid_grant") {
		t.Fatalf("with the exchange refused: %v, want LoginNeeded with the provider's error code", err)
	}
	if n := e.Count(&e.SignIns); n != 1 {
		t.Errorf("the run signed in at the provider: %d sign-ins", n)
	}
}

// With no refresh token from the provider, an expired ID token is a
// LoginNeeded: nothing is sent to the provider.
func TestEnterpriseRunExpiredIDToken(t *testing.T) {
	t.Parallel()
	e := runtest.StartEnterprise(t)
	store := OpenStore(t.TempDir())
	e.Set(func(e *runtest.Enterprise) { e.IDTokenLife = 30 * time.Second }) // under the minute a renewal wants
	g, _, err := enterpriseSignIn(t, e, store, e.IDToken())
	if err != nil {
		t.Fatal(err)
	}
	e.ExpireAccess()
	h, err := ForRun(store, g.Server, "corp", enterpriseClient(e), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = connectWith(e.URL, h)
	var need *LoginNeeded
	if !errors.As(err, &need) || !strings.Contains(need.Reason, "ID token has expired") {
		t.Fatalf("err = %v, want LoginNeeded for the expired ID token", err)
	}
	if n := e.Count(&e.Exchanges); n != 1 {
		t.Errorf("%d exchanges, want only the login's", n)
	}
}

func TestAuthStyle(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		methods []string
		secret  bool
		want    oauth2.AuthStyle
	}{
		{nil, true, oauth2.AuthStyleInHeader}, // RFC 8414: client_secret_basic when none is named
		{[]string{"client_secret_basic"}, true, oauth2.AuthStyleInHeader},
		{[]string{"client_secret_post"}, true, oauth2.AuthStyleInParams},
		{[]string{"client_secret_post", "client_secret_basic"}, true, oauth2.AuthStyleInHeader},
		{[]string{"private_key_jwt"}, true, oauth2.AuthStyleInHeader},
		{[]string{"client_secret_basic"}, false, oauth2.AuthStyleInParams},
	} {
		if got := authStyle(c.methods, c.secret); got != c.want {
			t.Errorf("authStyle(%v, %v) = %v, want %v", c.methods, c.secret, got, c.want)
		}
	}
}

func TestIDTokenExpiry(t *testing.T) {
	t.Parallel()
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for name, c := range map[string]struct {
		token string
		want  time.Time
	}{
		"exp":          {runtest.FakeJWT(map[string]any{"exp": exp.Unix()}), exp},
		"float exp":    {runtest.FakeJWT(map[string]any{"exp": float64(exp.Unix()) + 0.5}), exp},
		"no exp":       {runtest.FakeJWT(map[string]any{"sub": "x"}), time.Time{}},
		"string exp":   {runtest.FakeJWT(map[string]any{"exp": "soon"}), time.Time{}},
		"negative exp": {runtest.FakeJWT(map[string]any{"exp": -1}), time.Time{}},
		"two parts":    {"a.b", time.Time{}},
		"not base64":   {"a.!!!.c", time.Time{}},
		"not JSON":     {"a.bm90IGpzb24.c", time.Time{}},
		"empty":        {"", time.Time{}},
	} {
		got, err := IDTokenExpiry(c.token)
		if c.want.IsZero() {
			if err == nil {
				t.Errorf("%s: IDTokenExpiry = %v, want an error", name, got)
			}
			continue
		}
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%s: IDTokenExpiry = %v, %v; want %v", name, got, err, c.want)
		}
	}
	if err := CheckIDToken(runtest.FakeJWT(map[string]any{"exp": time.Now().Add(-time.Second).Unix()}), time.Now()); err == nil ||
		!strings.Contains(err.Error(), "expired") {
		t.Errorf("CheckIDToken of an expired token: %v", err)
	}
}

func TestParseIdPMetadata(t *testing.T) {
	t.Parallel()
	const issuer = "https://idp.example.com/tenant"
	for name, c := range map[string]struct{ body, want string }{
		"ok":                {`{"issuer":"https://idp.example.com/tenant","token_endpoint":"https://idp.example.com/tenant/token"}`, "https://idp.example.com/tenant/token"},
		"trailing slash":    {`{"issuer":"https://idp.example.com/tenant/","token_endpoint":"https://idp.example.com/t"}`, "https://idp.example.com/t"},
		"loopback http":     {`{"issuer":"https://idp.example.com/tenant","token_endpoint":"http://127.0.0.1:9/token"}`, "http://127.0.0.1:9/token"},
		"another issuer":    {`{"issuer":"https://evil.example.com","token_endpoint":"https://evil.example.com/token"}`, ""},
		"no issuer":         {`{"token_endpoint":"https://idp.example.com/token"}`, ""},
		"no token endpoint": {`{"issuer":"https://idp.example.com/tenant"}`, ""},
		"http endpoint":     {`{"issuer":"https://idp.example.com/tenant","token_endpoint":"http://idp.example.com/token"}`, ""},
		"javascript":        {`{"issuer":"https://idp.example.com/tenant","token_endpoint":"javascript:alert(1)"}`, ""},
		"not JSON":          {`<html>`, ""},
		"an array":          {`[]`, ""},
	} {
		got, err := ParseIdPMetadata([]byte(c.body), issuer)
		if c.want == "" {
			if err == nil {
				t.Errorf("%s: ParseIdPMetadata = %q, want an error", name, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: ParseIdPMetadata = %q, %v; want %q", name, got, err, c.want)
		}
	}
}

func TestClientCheckIdP(t *testing.T) {
	t.Parallel()
	ok := Client{ClientID: "c", ClientSecret: "s", IdPIssuer: "https://idp.example.com", IdPClientID: "i"}
	if why := ok.Check(); why != "" {
		t.Errorf("%+v: %s", ok, why)
	}
	loop := ok
	loop.IdPIssuer = "http://127.0.0.1:8080"
	if why := loop.Check(); why != "" {
		t.Errorf("a loopback provider: %s", why)
	}
	for want, c := range map[string]Client{
		"go only with idp_issuer": {ClientID: "c", IdPClientID: "i"},
		"leave grant_type out":    {ClientID: "c", IdPIssuer: "https://idp.example.com", IdPClientID: "i", GrantType: GrantAuthorizationCode},
		"needs client_id":         {IdPIssuer: "https://idp.example.com", IdPClientID: "i"},
		"and idp_client_id":       {ClientID: "c", IdPIssuer: "https://idp.example.com"},
		"must be an https":        {ClientID: "c", IdPIssuer: "http://idp.example.com", IdPClientID: "i"},
		"no issuer URL":           {ClientID: "c", IdPIssuer: "https://idp.example.com/?tenant=1", IdPClientID: "i"},
	} {
		if why := c.Check(); !strings.Contains(why, want) {
			t.Errorf("%+v: Check = %q, want %q", c, why, want)
		}
	}
}

func FuzzIDTokenExpiry(f *testing.F) {
	f.Add(runtest.FakeJWT(map[string]any{"exp": 1800000000}))
	f.Add("a.eyJleHAiOjF9.c")
	f.Add("a.eyJleHAiOiIxIn0.c")
	f.Add("..")
	f.Fuzz(func(t *testing.T, token string) {
		exp, err := IDTokenExpiry(token)
		if err == nil && (exp.Before(time.Unix(0, 0)) || exp.Location() != time.UTC) {
			t.Errorf("IDTokenExpiry(%q) = %v", token, exp)
		}
	})
}

func FuzzParseIdPMetadata(f *testing.F) {
	f.Add([]byte(`{"issuer":"https://idp.example.com","token_endpoint":"https://idp.example.com/token"}`), "https://idp.example.com")
	f.Add([]byte(`{"issuer":"http://127.0.0.1:1","token_endpoint":"http://[::1]:2/t"}`), "http://127.0.0.1:1/")
	f.Fuzz(func(t *testing.T, body []byte, issuer string) {
		got, err := ParseIdPMetadata(body, issuer)
		if err != nil {
			return
		}
		if !strings.HasPrefix(got, "https://") && !strings.HasPrefix(got, "http://") {
			t.Errorf("ParseIdPMetadata gave a token endpoint %q that is no web URL", got)
		}
	})
}

func TestInsufficientScope(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		headers []string
		want    string
	}{
		{[]string{`Bearer error="insufficient_scope", scope="read write"`}, "read write"},
		{[]string{`Basic realm="x"`, `Bearer scope="a b", error="insufficient_scope"`}, "a b"},
		{[]string{`Bearer error="invalid_token", scope="read"`}, ""},
		{[]string{`Bearer scope="read"`}, ""},
		{[]string{`Basic error="insufficient_scope", scope="read"`}, ""},
		{[]string{`Bearer error="insufficient_scope"`}, ""},
		{[]string{`Bearer error="insufficient_scope", scope="ok ` + strings.Repeat("x", 300) + `"`}, "ok"},
		{[]string{`Bearer error="insufficient_scope", scope="unterminated`}, ""},
		{nil, ""},
	} {
		if got := strings.Join(InsufficientScope(c.headers), " "); got != c.want {
			t.Errorf("InsufficientScope(%q) = %q, want %q", c.headers, got, c.want)
		}
	}
}

func FuzzInsufficientScope(f *testing.F) {
	f.Add(`Bearer error="insufficient_scope", scope="read write"`)
	f.Add(`Bearer realm="a\"b", error=insufficient_scope, scope=x`)
	f.Fuzz(func(t *testing.T, header string) {
		for _, s := range InsufficientScope([]string{header}) {
			if s == "" || strings.ContainsAny(s, " \t\n") || len(s) > maxScope {
				t.Errorf("InsufficientScope(%q) gave the scope %q", header, s)
			}
		}
	})
}

// A server that asks for more scopes mid-run (403 insufficient_scope)
// gets them through the provider, with no person: the kept ID token is
// exchanged again for the scopes the grant had and those asked for; when
// the provider's policy withholds them, it is a LoginNeeded, not a loop.
func TestEnterpriseRunStepsUp(t *testing.T) {
	t.Parallel()
	for _, withhold := range []bool{false, true} {
		e := runtest.StartEnterprise(t)
		store := OpenStore(t.TempDir())
		g, _, err := enterpriseSignIn(t, e, store, e.IDToken())
		if err != nil {
			t.Fatal(err)
		}
		e.Set(func(e *runtest.Enterprise) {
			e.CallScope = "admin"
			if withhold {
				e.Withhold = "admin"
			}
		})
		h, err := ForRun(store, g.Server, "corp", enterpriseClient(e), nil)
		if err != nil {
			t.Fatal(err)
		}
		c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
		s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.URL, OAuthHandler: h, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami"})
		var again error
		if withhold {
			_, again = s.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami"})
		}
		s.Close()
		var need *LoginNeeded
		switch {
		case !withhold && (err != nil || res.IsError):
			t.Errorf("the step-up failed: %v", err)
		case !withhold:
			kept, _ := store.Load(g.Server)
			if !slices.Contains(kept.Scopes, "admin") || kept.AccessToken != e.Access() {
				t.Errorf("the stepped-up grant was not kept: %+v", kept)
			}
		case !errors.As(err, &need) || !strings.Contains(need.Reason, "did not grant the scopes the server asks for: admin"):
			t.Errorf("with the scope withheld: %v, want LoginNeeded", err)
		}
		if withhold && (!errors.As(again, &need) || !strings.Contains(need.Reason, "refuses what the identity provider granted")) {
			t.Errorf("the next call, the scope withheld: %v, want LoginNeeded", again)
		}
		if n := e.Count(&e.Exchanges); n != 2 {
			t.Errorf("withhold=%v: %d exchanges, want the login's and the step-up's", withhold, n)
		}
	}
}

// A run's refusal for insufficient scope is kept with the sign-in for
// the next login, within a bound a server cannot grow without end.
func TestStoredKeepsStepUp(t *testing.T) {
	t.Parallel()
	store := OpenStore(t.TempDir())
	g := &Grant{Server: "https://mcp.example.com/mcp", AccessToken: "kept-access-token", Scopes: []string{"read"}}
	if err := store.Save(g); err != nil {
		t.Fatal(err)
	}
	h, err := ForRun(store, g.Server, "work", Client{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	refuse := func(scope string) error {
		resp := &http.Response{StatusCode: http.StatusForbidden, Body: io.NopCloser(strings.NewReader("")),
			Header: http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope", scope="` + scope + `"`}}}
		return h.Authorize(context.Background(), &http.Request{}, resp)
	}
	err = refuse("read write")
	var need *LoginNeeded
	if !errors.As(err, &need) || !strings.Contains(err.Error(), "lacks: write") {
		t.Fatalf("Authorize = %v, want LoginNeeded naming write", err)
	}
	if kept, _ := store.Load(g.Server); strings.Join(kept.StepUp, " ") != "read write" || kept.AccessToken != g.AccessToken {
		t.Errorf("kept = %+v", kept)
	}
	var many []string
	for i := range maxStepUp {
		many = append(many, fmt.Sprintf("s%d", i))
	}
	refuse(strings.Join(many, " "))
	if kept, _ := store.Load(g.Server); len(kept.StepUp) != 2 {
		t.Errorf("a refusal with %d scopes was kept: %d", len(many), len(kept.StepUp))
	}
}
