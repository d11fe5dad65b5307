package mcpauth

// Enterprise-managed authorization (the MCP extension
// io.modelcontextprotocol/enterprise-managed-authorization, also called
// cross-app access): the person signs in once, at the enterprise's
// identity provider; the provider's ID token is exchanged there (RFC 8693)
// for an ID-JAG, an identity assertion JWT authorization grant naming one
// server, and the ID-JAG is presented to that server's authorization
// server as a JWT bearer grant (RFC 7523) for the server's token. The
// provider decides, at each exchange, who may use which server.
//
// The exchange itself is the SDK's (oauthex.ExchangeToken); the SDK's
// EnterpriseHandler is not used: it authenticates to the authorization
// server only in the request body, where the server's metadata may ask
// for client_secret_basic, and it signs in anew at every refusal, where a
// run must never open a browser.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/ask-cli/ask/internal/termtext"
)

// GrantJWTBearer is the grant type of a JWT authorization grant (RFC 7523 §2.1).
const GrantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// enterprise is a client signing in through an identity provider.
type enterprise struct {
	label  string
	client Client
	httpc  *http.Client
}

// scopes are those the token is asked for: the config's, else what the
// server asked for.
func (e enterprise) scopes(t target) []string {
	if len(e.client.Scopes) > 0 {
		return e.client.Scopes
	}
	return t.Scopes
}

// idpTokenURL is the identity provider's token endpoint, from its
// metadata (OpenID Connect discovery, else RFC 8414), whose issuer must be
// the configured one. The SDK's discovery is not used: it refuses a
// provider that does not advertise PKCE, which an exchange does not use.
func (e enterprise) idpTokenURL(ctx context.Context) (string, error) {
	issuer := strings.TrimRight(e.client.IdPIssuer, "/")
	u, err := url.Parse(issuer)
	if err != nil {
		return "", fmt.Errorf("idp_issuer: %w", err)
	}
	inserted := *u
	inserted.Path = "/.well-known/oauth-authorization-server" + u.Path
	for _, metaURL := range []string{issuer + "/.well-known/openid-configuration", inserted.String()} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, metaURL, nil)
		if err != nil {
			return "", err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := e.httpc.Do(req)
		if err != nil {
			return "", fmt.Errorf("the identity provider's metadata: %w", err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
		resp.Body.Close()
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			continue
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("the identity provider's metadata at %s: HTTP %d", metaURL, resp.StatusCode)
		}
		tokenURL, err := ParseIdPMetadata(body, e.client.IdPIssuer)
		if err != nil {
			return "", fmt.Errorf("the identity provider's metadata at %s: %w", metaURL, err)
		}
		return tokenURL, nil
	}
	return "", fmt.Errorf("the identity provider %s publishes no metadata (/.well-known/openid-configuration)", e.client.IdPIssuer)
}

// maxMetadata bounds an identity provider's metadata document.
const maxMetadata = 1 << 20

// ParseIdPMetadata is the token endpoint an identity provider's metadata
// document names; its issuer must be issuer (a trailing slash aside), as
// OpenID Connect Discovery §4.3 and RFC 8414 §3.3 require, and the
// endpoint https (http on a loopback address only).
func ParseIdPMetadata(body []byte, issuer string) (string, error) {
	if len(body) > maxMetadata {
		return "", errors.New("the document is over 1 MiB")
	}
	var meta struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := json.Unmarshal(body, &meta); err != nil {
		return "", fmt.Errorf("not a JSON metadata document: %v", err)
	}
	if strings.TrimRight(meta.Issuer, "/") != strings.TrimRight(issuer, "/") {
		return "", fmt.Errorf("it names the issuer %q, not %q", termtext.Safe(meta.Issuer), issuer)
	}
	if meta.TokenEndpoint == "" {
		return "", errors.New("it names no token_endpoint")
	}
	u, err := url.Parse(meta.TokenEndpoint)
	if err != nil || u.Host == "" || u.Scheme != "https" && (u.Scheme != "http" || !isLoopback(u.Hostname())) {
		return "", fmt.Errorf("its token_endpoint %q is not an https:// URL", termtext.Safe(meta.TokenEndpoint))
	}
	// As parsed: a scheme is case-insensitive (RFC 3986 §3.1), and the
	// endpoint goes on as the "https" it was checked to be.
	return u.String(), nil
}

func (e enterprise) idpCredentials() *oauthex.ClientCredentials {
	c := &oauthex.ClientCredentials{ClientID: e.client.IdPClientID}
	if e.client.IdPClientSecret != "" {
		c.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: e.client.IdPClientSecret}
	}
	return c
}

// token gets the server's token for the person idToken names: the ID
// token exchanged at the provider for an ID-JAG whose audience is the
// server's authorization server and whose resource is the server, then
// the ID-JAG presented there.
func (e enterprise) token(ctx context.Context, idpTokenURL string, t target, idToken string) (*oauth2.Token, error) {
	exchanged, err := oauthex.ExchangeToken(ctx, idpTokenURL, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience:           t.Issuer,
		Resource:           t.Resource,
		Scope:              e.scopes(t),
		SubjectToken:       idToken,
		SubjectTokenType:   oauthex.TokenTypeIDToken,
	}, e.idpCredentials(), e.httpc)
	if err != nil {
		return nil, fmt.Errorf("the identity provider refused the exchange of the ID token: %w", err)
	}
	if typ, _ := exchanged.Extra("issued_token_type").(string); typ != oauthex.TokenTypeIDJAG {
		return nil, fmt.Errorf("the identity provider's exchange issued %q, not an ID-JAG", termtext.Safe(typ))
	}
	cfg := &oauth2.Config{
		ClientID:     e.client.ClientID,
		ClientSecret: e.client.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: t.TokenURL, AuthStyle: authStyle(t.AuthMethods, e.client.ClientSecret != "")},
	}
	opts := []oauth2.AuthCodeOption{
		oauth2.SetAuthURLParam("grant_type", GrantJWTBearer),
		oauth2.SetAuthURLParam("assertion", exchanged.AccessToken),
	}
	if s := e.scopes(t); len(s) > 0 {
		opts = append(opts, oauth2.SetAuthURLParam("scope", strings.Join(s, " ")))
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, e.httpc), "", opts...)
	if err != nil {
		return nil, fmt.Errorf("the authorization server refused the ID-JAG: %w", err)
	}
	return tok, nil
}

// authStyle is how the client authenticates at a token endpoint that
// supports methods: HTTP Basic unless the server names only the request
// body (RFC 8414 §2: client_secret_basic when it names none); a client
// with no secret gives its client_id in the body.
func authStyle(methods []string, secret bool) oauth2.AuthStyle {
	if !secret {
		return oauth2.AuthStyleInParams
	}
	if !slices.Contains(methods, "client_secret_basic") && slices.Contains(methods, "client_secret_post") {
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleInHeader
}

// newGrant is what a sign-in through the provider keeps.
func (e enterprise) newGrant(server, name string, t target, tok *oauth2.Token, idToken, idpRefresh string) *Grant {
	g := &Grant{Server: server, Name: name, ClientID: e.client.ClientID, TokenURL: t.TokenURL,
		AuthStyle: int(authStyle(t.AuthMethods, e.client.ClientSecret != "")), Scopes: e.scopes(t),
		Issuer: t.Issuer, Resource: t.Resource, IDToken: idToken, IdPRefreshToken: idpRefresh, SignedIn: time.Now().UTC()}
	g.setToken(tok)
	return g
}

// IDTokenExpiry is the exp claim of the JWT token, read without checking
// its signature: the provider that issued it checks it, this only says
// whether it is worth presenting.
func IDTokenExpiry(token string) (time.Time, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, errors.New("not a JWT (three dot-separated parts)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, fmt.Errorf("the JWT's claims are not base64url: %v", err)
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return time.Time{}, fmt.Errorf("the JWT's claims are not a JSON object: %v", err)
	}
	if claims.Exp == nil {
		return time.Time{}, errors.New("the JWT has no exp claim")
	}
	exp, err := claims.Exp.Float64()
	if err != nil || exp < 0 || exp > 1<<40 {
		return time.Time{}, fmt.Errorf("the JWT's exp claim %q is not a time", claims.Exp.String())
	}
	return time.Unix(int64(exp), 0).UTC(), nil
}

// CheckIDToken says what is wrong with an ID token given to ask mcp
// login: it must be a JWT that has not expired.
func CheckIDToken(token string, now time.Time) error {
	exp, err := IDTokenExpiry(token)
	if err != nil {
		return fmt.Errorf("the ID token: %w", err)
	}
	if !exp.After(now) {
		return fmt.Errorf("the ID token expired at %s: get a new one from the identity provider", exp.Format(time.RFC3339))
	}
	return nil
}

// enterpriseLogin is the handler of an ask mcp login through the
// provider: it gets an ID token (the one given, else by signing in at
// the provider in the browser), then the server's token.
type enterpriseLogin struct {
	enterprise
	l *Login

	mu     sync.Mutex
	grant  *Grant
	source oauth2.TokenSource
}

func (h *enterpriseLogin) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.source, nil
}

func (h *enterpriseLogin) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, resp.Body)
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("the server's WWW-Authenticate: %v", err)
	}
	t, err := discover(ctx, h.httpc, challenges, req.URL.String())
	if err != nil {
		return err
	}
	idpTokenURL, err := h.idpTokenURL(ctx)
	if err != nil {
		return err
	}
	idToken, idpRefresh, err := h.idToken(ctx)
	if err != nil {
		return err
	}
	tok, err := h.token(ctx, idpTokenURL, t, idToken)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.grant = h.newGrant(h.l.Server, h.l.Name, t, tok, idToken, idpRefresh)
	h.source = oauth2.StaticTokenSource(tok)
	return nil
}

// idToken is the ID token given to the login, else one from signing in
// at the provider in the browser (OpenID Connect, PKCE, the loopback
// redirect), with the provider's refresh token when it gives one.
func (h *enterpriseLogin) idToken(ctx context.Context) (id, refresh string, err error) {
	if h.l.IDToken != "" {
		return h.l.IDToken, "", nil
	}
	redirect, cb, stop, err := listenLoopback(h.label)
	if err != nil {
		return "", "", err
	}
	defer stop()
	// offline_access: a refresh token, with which later runs get new ID
	// tokens, where the provider offers one.
	scopes := []string{"openid"}
	if meta, err := auth.GetAuthServerMetadata(ctx, h.client.IdPIssuer, h.httpc); err == nil && meta != nil && slices.Contains(meta.ScopesSupported, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	tok, err := extauth.PerformOIDCLogin(ctx, &extauth.OIDCLoginConfig{
		IssuerURL: h.client.IdPIssuer, Credentials: h.idpCredentials(), RedirectURL: redirect,
		Scopes: scopes, HTTPClient: h.httpc,
	}, func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		return h.l.fetchCode(ctx, args.URL, cb)
	})
	if err != nil {
		return "", "", fmt.Errorf("signing in at the identity provider: %w", err)
	}
	id, _ = tok.Extra("id_token").(string)
	return id, tok.RefreshToken, nil
}

// enterpriseRun is a run's handler over a sign-in kept through the
// provider: the kept token while it lasts, then a new one from the kept
// ID token (or one the provider's refresh token gets), exchanged again.
// It never opens a browser: what it cannot renew is a LoginNeeded.
type enterpriseRun struct {
	enterprise
	store Store

	mu      sync.Mutex
	grant   *Grant
	source  oauth2.TokenSource
	renewed bool // this run got a token of its own: a refusal of it is final
}

func newEnterpriseRun(e enterprise, store Store, g *Grant) *enterpriseRun {
	h := &enterpriseRun{enterprise: e, store: store, grant: g}
	h.source = oauth2.ReuseTokenSource(g.token(), renewer{h})
	return h
}

func (h *enterpriseRun) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.source, nil
}

// renewer gets the run's token anew when the kept one has expired.
type renewer struct{ h *enterpriseRun }

func (r renewer) Token() (*oauth2.Token, error) { return r.h.renew(context.Background(), nil) }

// renew gets and keeps a new token for the server, for the kept grant's
// scopes and more.
func (h *enterpriseRun) renew(ctx context.Context, more []string) (*oauth2.Token, error) {
	h.mu.Lock()
	g := *h.grant
	h.mu.Unlock()
	g.Scopes = union(g.Scopes, more)
	fail := func(why string, err error) (*oauth2.Token, error) {
		var re *oauth2.RetrieveError
		switch {
		case errors.As(err, &re) && re.ErrorCode != "":
			why += ": " + termtext.Safe(re.ErrorCode) // the server's own words stay out of the line
		case err != nil:
			why += ": " + termtext.Safe(err.Error())
		}
		return nil, &LoginNeeded{Label: h.label, Reason: why}
	}
	idpTokenURL, err := h.idpTokenURL(ctx)
	if err != nil {
		return fail("the identity provider cannot be reached", err)
	}
	if exp, err := IDTokenExpiry(g.IDToken); err != nil || time.Until(exp) < time.Minute {
		if g.IdPRefreshToken == "" {
			return fail("the identity provider's ID token has expired", nil)
		}
		cfg := &oauth2.Config{ClientID: h.client.IdPClientID, ClientSecret: h.client.IdPClientSecret,
			Endpoint: oauth2.Endpoint{TokenURL: idpTokenURL, AuthStyle: oauth2.AuthStyleInParams}}
		tok, err := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, h.httpc), &oauth2.Token{RefreshToken: g.IdPRefreshToken}).Token()
		if err != nil {
			return fail("the identity provider would not renew the ID token", err)
		}
		id, _ := tok.Extra("id_token").(string)
		if id == "" {
			return fail("the identity provider renewed its sign-in without a new ID token", nil)
		}
		g.IDToken = id
		if tok.RefreshToken != "" {
			g.IdPRefreshToken = tok.RefreshToken
		}
	}
	t := target{Resource: g.Resource, Issuer: g.Issuer, TokenURL: g.TokenURL, Scopes: g.Scopes}
	if oauth2.AuthStyle(g.AuthStyle) == oauth2.AuthStyleInParams {
		t.AuthMethods = []string{"client_secret_post"}
	}
	e := h.enterprise
	e.client.Scopes = nil // the kept scopes are the configured ones, and any the server asked for since
	tok, err := e.token(ctx, idpTokenURL, t, g.IDToken)
	if err != nil {
		return fail("the exchange of the kept ID token failed", err)
	}
	g.setToken(tok)
	h.mu.Lock()
	h.grant, h.renewed = &g, true
	h.mu.Unlock()
	h.store.Save(&g) // kept for the next run; this one has its token either way
	return tok, nil
}

// Authorize is asked when the server refuses the token. Without a
// person, a new token is got once per run for a refused one, and one
// for more scopes when the server asks for scopes the grant lacks (403
// insufficient_scope: the provider's policy decides whether it grants
// them); anything else is a LoginNeeded.
func (h *enterpriseRun) Authorize(ctx context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	h.mu.Lock()
	renewed, had := h.renewed, h.grant.Scopes
	h.mu.Unlock()
	var more []string
	switch {
	case resp.StatusCode == http.StatusForbidden:
		asked := InsufficientScope(resp.Header.Values("WWW-Authenticate"))
		if len(union(had, asked)) == len(had) {
			return &LoginNeeded{Label: h.label, Reason: "the server refuses what the identity provider granted"}
		}
		more = asked
	case renewed:
		return &LoginNeeded{Label: h.label, Reason: "the server refused the token the identity provider's sign-in got"}
	}
	tok, err := h.renew(ctx, more)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.source = oauth2.ReuseTokenSource(tok, renewer{h})
	h.mu.Unlock()
	// A token response names its scope when it grants less than asked
	// (RFC 6749 §5.1): then the retry would be refused again.
	if granted, ok := tok.Extra("scope").(string); ok && len(more) > 0 {
		if missing := slices.DeleteFunc(slices.Clone(more), func(s string) bool { return slices.Contains(strings.Fields(granted), s) }); len(missing) > 0 {
			return &LoginNeeded{Label: h.label, Reason: "the identity provider did not grant the scopes the server asks for: " + termtext.Safe(strings.Join(missing, " "))}
		}
	}
	return nil
}
