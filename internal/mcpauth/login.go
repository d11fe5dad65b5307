package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/ask-cli/ask/internal/termtext"
)

// Client is how ask presents itself to a server's authorization server,
// from the `oauth` object of an mcpServers entry; the zero Client
// registers itself (dynamic client registration).
type Client struct {
	ClientID     string   `json:"client_id,omitempty"`
	ClientSecret string   `json:"client_secret,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	// MetadataURL is a client ID metadata document's https URL, used as
	// the client id where the authorization server takes one.
	MetadataURL string `json:"client_metadata_url,omitempty"`
	// GrantType is "authorization_code" (the default: a person signs in)
	// or "client_credentials" (a machine, with ClientID and ClientSecret:
	// no sign-in, each run gets its own token).
	GrantType string `json:"grant_type,omitempty"`
	// PrivateKeyFile is a PEM private key's path: with client
	// credentials, the client authenticates with a JWT signed by it
	// (private_key_jwt) instead of ClientSecret.
	PrivateKeyFile string `json:"private_key_file,omitempty"`
	// SigningAlgorithm is the JWT's: ES256 (the default) or RS256.
	SigningAlgorithm string `json:"signing_algorithm,omitempty"`
	// IdPIssuer is the enterprise identity provider's issuer URL: with it
	// the server is signed in to through that provider (enterprise-managed
	// authorization): the person signs in there, and the provider's ID
	// token is exchanged for each server's token. ClientID and
	// ClientSecret are then ask's client at the server's authorization
	// server, IdPClientID and IdPClientSecret its client at the provider.
	IdPIssuer       string `json:"idp_issuer,omitempty"`
	IdPClientID     string `json:"idp_client_id,omitempty"`
	IdPClientSecret string `json:"idp_client_secret,omitempty"`
}

// Grant types a Client may name.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// Check says what is wrong with c, "" when nothing is.
func (c Client) Check() string {
	switch c.GrantType {
	case "", GrantAuthorizationCode:
	case GrantClientCredentials:
		if c.ClientID == "" || (c.ClientSecret == "") == (c.PrivateKeyFile == "") {
			return `grant_type "client_credentials" needs client_id and one of client_secret and private_key_file`
		}
	default:
		return fmt.Sprintf("grant_type %q: choose authorization_code or client_credentials", c.GrantType)
	}
	if (c.PrivateKeyFile != "" || c.SigningAlgorithm != "") && !c.Machine() {
		return `private_key_file and signing_algorithm go only with grant_type "client_credentials"`
	}
	if c.SigningAlgorithm != "" && c.SigningAlgorithm != AlgES256 && c.SigningAlgorithm != AlgRS256 {
		return fmt.Sprintf("signing_algorithm %q: choose ES256 or RS256", c.SigningAlgorithm)
	}
	if c.SigningAlgorithm != "" && c.PrivateKeyFile == "" {
		return "signing_algorithm without private_key_file"
	}
	if c.ClientSecret != "" && c.ClientID == "" {
		return "client_secret without client_id"
	}
	if why := c.checkIdP(); why != "" {
		return why
	}
	if c.MetadataURL != "" && !strings.HasPrefix(c.MetadataURL, "https://") {
		return "client_metadata_url must be an https:// URL"
	}
	return ""
}

// checkIdP says what is wrong with c's identity provider keys.
func (c Client) checkIdP() string {
	switch {
	case c.IdPIssuer == "" && (c.IdPClientID != "" || c.IdPClientSecret != ""):
		return "idp_client_id and idp_client_secret go only with idp_issuer"
	case c.IdPIssuer == "":
		return ""
	case c.GrantType != "":
		return "idp_issuer signs in through the identity provider: leave grant_type out"
	case c.ClientID == "" || c.IdPClientID == "":
		return "idp_issuer needs client_id (ask's client at the server's authorization server) and idp_client_id (at the identity provider)"
	case c.MetadataURL != "":
		return "idp_issuer goes with client_id, not client_metadata_url"
	}
	return CheckIssuer(c.IdPIssuer)
}

// CheckIssuer says what is wrong with an identity provider's issuer URL:
// https, or http on a loopback address only (a provider on this machine).
func CheckIssuer(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Sprintf("idp_issuer %q is no issuer URL (https://host[/path])", raw)
	}
	if u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname()) {
		return ""
	}
	return fmt.Sprintf("idp_issuer %q must be an https:// URL (http:// only on a loopback address)", raw)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Enterprise reports whether c signs in through an identity provider.
func (c Client) Enterprise() bool { return c.IdPIssuer != "" }

// Machine reports whether c signs in with no person (client credentials).
func (c Client) Machine() bool { return c.GrantType == GrantClientCredentials }

// Login is one `ask mcp login`.
type Login struct {
	Server string // the server's canonical URL
	Name   string // its mcpServers name, "" for a URL given as is
	Client Client
	// HTTP makes every request of the flow; nil is http.DefaultClient.
	HTTP *http.Client
	// Open shows the authorization URL to the person: in a browser. Its
	// failure is told, not fatal: the URL is always printed too.
	Open func(url string) error
	// Notes receives the URL and what happens.
	Notes   io.Writer
	Version string
	// Wait bounds the wait for the browser's redirect; 0 is 5 minutes.
	Wait time.Duration
	// IDToken is an ID token from the identity provider of a Client with
	// IdPIssuer, got elsewhere (the provider's own tool): given, no
	// browser is opened.
	IDToken string
}

// Run signs in: it connects to the server, and when the server asks for
// authorization, runs the authorization code flow with a redirect to a
// loopback port on 127.0.0.1 (with IdPIssuer: gets an ID token at the
// identity provider, the same way unless one is given, and exchanges it
// for the server's token), then keeps the grant in store. It proves the
// token by listing the server's tools.
func (l Login) Run(ctx context.Context, store Store) (*Grant, error) {
	if why := l.Client.Check(); why != "" {
		return nil, fmt.Errorf("oauth: %s", why)
	}
	if l.Client.Machine() {
		return nil, fmt.Errorf("%s signs in with client credentials: each run gets its own token, so there is nothing to log in to", l.label())
	}
	httpc := l.HTTP
	if httpc == nil {
		httpc = http.DefaultClient
	}
	if l.Client.Enterprise() {
		h := &enterpriseLogin{enterprise: enterprise{label: l.label(), client: l.Client, httpc: httpc}, l: &l}
		if err := l.connect(ctx, httpc, h); err != nil {
			return nil, err
		}
		return l.keep(store, h.grant)
	}
	if l.IDToken != "" {
		return nil, fmt.Errorf("%s signs in without an identity provider: an ID token goes only with the oauth key idp_issuer", l.label())
	}
	redirect, cb, stop, err := listenLoopback(l.label())
	if err != nil {
		return nil, err
	}
	defer stop()

	var grant *Grant
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			ClientName:              "ask",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}},
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return l.fetchCode(ctx, args.URL, cb)
		},
		RequestRefreshToken: true,
		Client:              httpc,
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			grant = &Grant{Server: l.Server, Name: l.Name, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
				AuthStyle: int(c.Endpoint.AuthStyle), AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL,
				Scopes: c.Scopes, SignedIn: time.Now().UTC()}
			grant.setToken(t)
			return c.TokenSource(ctx, t), nil
		},
	}
	if c := l.Client; c.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: c.ClientID}
		if c.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: c.ClientSecret}
		}
	}
	if l.Client.MetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: l.Client.MetadataURL}
	}
	// Scopes the server asked for in a run after the last sign-in (step
	// up) are asked for too, beside the configured or discovered ones.
	var stepUp []string
	if kept, err := store.Load(l.Server); err == nil && kept != nil && len(kept.StepUp) > 0 {
		stepUp = union(kept.Scopes, kept.StepUp)
	}
	cfg.ScopeFilter = func(discovered []string) []string {
		if len(l.Client.Scopes) > 0 {
			discovered = l.Client.Scopes
		}
		return union(discovered, stepUp)
	}
	handler, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	if err := l.connect(ctx, httpc, handler); err != nil {
		return nil, err
	}
	return l.keep(store, grant)
}

// connect connects to the server with handler, which signs in when the
// server asks, and proves the sign-in by listing the server's tools.
func (l Login) connect(ctx context.Context, httpc *http.Client, handler auth.OAuthHandler) error {
	client := sdk.NewClient(&sdk.Implementation{Name: "ask", Version: l.Version}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	session, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: l.Server, HTTPClient: httpc, OAuthHandler: handler, MaxRetries: 1}, nil)
	if err != nil {
		return fmt.Errorf("signing in to %s: %w", l.label(), err)
	}
	defer session.Close()
	if _, err := session.ListTools(ctx, nil); err != nil {
		return fmt.Errorf("signed in to %s, but listing its tools failed: %w", l.label(), err)
	}
	return nil
}

// keep saves the grant a sign-in got; nil is a server that asked for none.
func (l Login) keep(store Store, grant *Grant) (*Grant, error) {
	if grant == nil {
		return nil, fmt.Errorf("%s did not ask ask to sign in: it takes requests without a login", l.label())
	}
	if err := store.Save(grant); err != nil {
		return nil, err
	}
	return grant, nil
}

// listenLoopback listens on a port of 127.0.0.1 for the browser's
// redirect back; stop closes it.
func listenLoopback(label string) (redirect string, cb *callback, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, fmt.Errorf("listening for the browser's redirect on 127.0.0.1: %w", err)
	}
	redirect = fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	cb = newCallback(label)
	srv := &http.Server{Handler: cb, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return redirect, cb, func() { srv.Close() }, nil
}

func (l Login) label() string {
	if l.Name != "" {
		return l.Name
	}
	return l.Server
}

// fetchCode shows the authorization URL, opens it, and waits for the
// browser to come back to the loopback redirect.
func (l Login) fetchCode(ctx context.Context, authURL string, cb *callback) (*auth.AuthorizationResult, error) {
	if l.Notes != nil {
		fmt.Fprintf(l.Notes, "Sign in to %s in your browser; if it does not open, open this URL:\n%s\n",
			termtext.Safe(l.label()), termtext.Safe(authURL))
	}
	if l.Open != nil {
		if err := l.Open(authURL); err != nil && l.Notes != nil {
			fmt.Fprintf(l.Notes, "could not open a browser: %v\n", err)
		}
	}
	wait := l.Wait
	if wait == 0 {
		wait = 5 * time.Minute
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case r := <-cb.results:
		if r.err != nil {
			return nil, r.err
		}
		return &r.AuthorizationResult, nil
	case <-timer.C:
		return nil, fmt.Errorf("no answer from the browser within %s", wait)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

type callbackResult struct {
	auth.AuthorizationResult
	err error
}

// callback is the loopback redirect's handler: it takes the first answer
// that comes back to /callback.
type callback struct {
	label   string
	results chan callbackResult
}

func newCallback(label string) *callback {
	return &callback{label: label, results: make(chan callbackResult, 1)}
}

func (c *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	res := callbackResult{AuthorizationResult: auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}}
	page := "Signed in to " + c.label + ". You can close this page and go back to the terminal."
	switch {
	case q.Get("error") != "":
		why := q.Get("error")
		if d := q.Get("error_description"); d != "" {
			why += ": " + d
		}
		res.err = fmt.Errorf("the authorization server refused: %s", termtext.Safe(why))
		page = "Not signed in: " + why
	case res.Code == "":
		res.err = errors.New("the browser came back without an authorization code")
		page = "Not signed in: no authorization code."
	}
	select {
	case c.results <- res:
	default:
		page = "This sign-in is already done."
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><title>ask</title><p>%s</p>\n", html.EscapeString(page))
}

// OpenBrowser opens url with $BROWSER (a command, or several separated by
// ':' as the convention has it, each tried in turn; "%s" in one stands
// for the URL), else the system's opener. It does not wait for the
// browser to exit.
func OpenBrowser(getenv func(string) string, url string) error {
	var cmds [][]string
	if b := getenv("BROWSER"); b != "" {
		for _, c := range strings.Split(b, ":") {
			words := strings.Fields(c)
			if len(words) == 0 {
				continue
			}
			replaced := false
			for i, w := range words {
				if strings.Contains(w, "%s") {
					words[i], replaced = strings.ReplaceAll(w, "%s", url), true
				}
			}
			if !replaced {
				words = append(words, url)
			}
			cmds = append(cmds, words)
		}
	} else if runtime.GOOS == "darwin" {
		cmds = [][]string{{"open", url}}
	} else {
		cmds = [][]string{{"xdg-open", url}}
	}
	var errs []error
	for _, argv := range cmds {
		cmd := exec.Command(argv[0], argv[1:]...)
		if err := cmd.Start(); err != nil {
			errs = append(errs, err)
			continue
		}
		go cmd.Wait()
		return nil
	}
	return errors.Join(errs...)
}
