package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/ask-cli/ask/internal/termtext"
)

// LoginNeeded is a server that wants a sign-in the run cannot do itself:
// no token is kept, the kept one was refused and cannot be refreshed, or
// the server asks for more scopes. A run never opens a browser; it names
// the command that does.
type LoginNeeded struct {
	Label  string // the server's name, or its URL
	Reason string
}

func (e *LoginNeeded) Error() string {
	return fmt.Sprintf("%s needs a sign-in (%s): run ask mcp login %s", e.Label, e.Reason, e.Label)
}

// ErrNotOAuth is a refusal from a server that does not say it signs in
// with OAuth.
var ErrNotOAuth = errors.New("the server refused the request and names no way to sign in")

// ForRun is the OAuth handler a run gives the remote server at server
// (canonical) named label: with client credentials, one that gets its
// own token; else one that uses the token kept for the server,
// refreshing it (and keeping the new one) by itself, and that answers
// any request for authorization with LoginNeeded. It is nil when nothing
// is kept and the server is not configured for OAuth: the server's 401
// then says what is wrong.
func ForRun(store Store, server, label string, client Client, httpc *http.Client) (auth.OAuthHandler, error) {
	if httpc == nil {
		httpc = http.DefaultClient
	}
	if client.Machine() && client.PrivateKeyFile != "" {
		signer, err := LoadSigner(client.PrivateKeyFile, client.SigningAlgorithm)
		if err != nil {
			return nil, fmt.Errorf("%s: oauth: %w", label, err)
		}
		return &jwtHandler{label: label, client: client, signer: signer, httpc: httpc}, nil
	}
	if client.Machine() {
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: client.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: client.ClientSecret}},
			HTTPClient:  httpc,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: oauth: %w", label, err)
		}
		return h, nil
	}
	g, err := store.Load(server)
	if err != nil {
		return nil, err
	}
	if g != nil && client.Enterprise() && g.IDToken != "" {
		return newEnterpriseRun(enterprise{label: label, client: client, httpc: httpc}, store, g), nil
	}
	if g == nil {
		return &stored{label: label, configured: client.ClientID != "" || client.MetadataURL != "" || len(client.Scopes) > 0 || client.GrantType != "" || client.Enterprise()}, nil
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, httpc)
	return &stored{label: label, grant: g, store: store,
		source: oauth2.ReuseTokenSource(g.token(), g.config().TokenSource(ctx, g.token()))}, nil
}

// stored is a run's handler over a kept grant.
type stored struct {
	label string
	grant *Grant // nil: nothing kept
	// configured: the config file gives the server an oauth client.
	configured bool
	store      Store
	source     oauth2.TokenSource

	mu   sync.Mutex
	kept string // the access token last kept
}

func (s *stored) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if s.grant == nil {
		return nil, nil
	}
	return s, nil
}

// Token is the kept token, refreshed when it has expired; a refreshed
// token is kept for the next run.
func (s *stored) Token() (*oauth2.Token, error) {
	t, err := s.source.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return nil, &LoginNeeded{Label: s.label, Reason: "the kept token could not be refreshed: " + re.ErrorCode}
		}
		return nil, &LoginNeeded{Label: s.label, Reason: "the kept token could not be refreshed"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.AccessToken != s.grant.AccessToken && t.AccessToken != s.kept {
		g := *s.grant
		g.setToken(t)
		if s.store.Save(&g) == nil {
			s.kept = t.AccessToken
		}
	}
	return t, nil
}

// Authorize is asked when the server refuses a request. A run signs in to
// nothing by itself.
func (s *stored) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	if s.grant == nil && !s.configured && !strings.Contains(strings.Join(resp.Header.Values("WWW-Authenticate"), " "), "resource_metadata") {
		// Nothing says the server signs in with OAuth: its refusal is
		// told as any other server's (a token a header should carry).
		return ErrNotOAuth
	}
	reason := "no sign-in is kept"
	switch {
	case s.grant != nil && resp.StatusCode == http.StatusForbidden:
		reason = "the server asks for more than the kept sign-in grants"
		if more := s.stepUp(resp); len(more) > 0 {
			reason = fmt.Sprintf("the server asks for scopes the kept sign-in lacks: %s; the login asks for them", termtext.Safe(strings.Join(more, " ")))
		}
	case s.grant != nil:
		reason = "the server refused the kept token"
	}
	return &LoginNeeded{Label: s.label, Reason: reason}
}

// stepUp keeps the scopes a refusal for insufficient scope asks for
// that the grant lacks, for the next login to ask for; it returns them.
func (s *stored) stepUp(resp *http.Response) []string {
	asked := InsufficientScope(resp.Header.Values("WWW-Authenticate"))
	var more []string
	for _, sc := range asked {
		if !slices.Contains(s.grant.Scopes, sc) {
			more = append(more, sc)
		}
	}
	if len(more) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := *s.grant
	if kept, err := s.store.Load(g.Server); err == nil && kept != nil {
		g = *kept // a refresh in this run may have kept a newer token
	}
	if stepUp := union(g.StepUp, asked); len(stepUp) <= maxStepUp {
		g.StepUp = stepUp
		s.store.Save(&g)
	}
	return more
}

// maxStepUp bounds the scopes kept for the next login: a server cannot
// grow the kept file without end.
const maxStepUp = 64

// InsufficientScope is the scope a Bearer challenge with the error
// insufficient_scope (RFC 6750 §3.1) asks for; nil when there is none.
func InsufficientScope(headers []string) []string {
	challenges, err := oauthex.ParseWWWAuthenticate(headers)
	if err != nil {
		return nil
	}
	for _, c := range challenges {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return slices.DeleteFunc(strings.Fields(c.Params["scope"]), func(s string) bool { return len(s) > maxScope })
		}
	}
	return nil
}

// maxScope is the longest scope taken from a server's challenge.
const maxScope = 256

// union is a with those of b it lacks, in order.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
