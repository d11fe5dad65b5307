// Package mcpauth signs ask in to remote MCP servers with OAuth 2.1, as the
// MCP authorization spec describes, and keeps what a sign-in grants.
//
// The flow itself (protected-resource and authorization-server metadata,
// client registration, PKCE, the resource parameter, step-up) is the
// official Go SDK's (go-sdk/auth); this package adds what a command-line
// client needs around it: a loopback redirect on 127.0.0.1, the browser,
// a store of grants in the state directory that no run, tool, transcript
// or request to a model ever sees, and handlers that refresh a stored
// token by themselves but never start a browser inside a run.
package mcpauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/oauth2"

	"github.com/ask-cli/ask/internal/owned"
)

// Grant is what one sign-in to one server gave: the client ask was
// registered as, the token endpoint, and the token. It is kept in the
// state directory only.
type Grant struct {
	// Server is the server's URL as the user named it (canonical form).
	Server       string   `json:"server"`
	Name         string   `json:"name,omitempty"` // the mcpServers name, when it had one
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret,omitempty"`
	AuthStyle    int      `json:"auth_style,omitempty"` // oauth2.AuthStyle
	AuthURL      string   `json:"auth_url,omitempty"`
	TokenURL     string   `json:"token_url"`
	Scopes       []string `json:"scopes,omitempty"`
	// StepUp are scopes the server asked for later (HTTP 403
	// insufficient_scope) that the grant lacks: the next ask mcp login
	// asks for them too.
	StepUp       []string  `json:"step_up,omitempty"`
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	SignedIn     time.Time `json:"signed_in"`
	// A sign-in through an identity provider (enterprise-managed
	// authorization) keeps what gets the next token with no person: the
	// provider's ID token and refresh token, and the ID-JAG's audience
	// (the authorization server's issuer) and resource.
	Issuer          string `json:"issuer,omitempty"`
	Resource        string `json:"resource,omitempty"`
	IDToken         string `json:"id_token,omitempty"`
	IdPRefreshToken string `json:"idp_refresh_token,omitempty"`
}

func (g *Grant) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     g.ClientID,
		ClientSecret: g.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: g.AuthURL, TokenURL: g.TokenURL, AuthStyle: oauth2.AuthStyle(g.AuthStyle)},
		Scopes:       g.Scopes,
	}
}

func (g *Grant) token() *oauth2.Token {
	return &oauth2.Token{AccessToken: g.AccessToken, TokenType: g.TokenType, RefreshToken: g.RefreshToken, Expiry: g.Expiry}
}

func (g *Grant) setToken(t *oauth2.Token) {
	g.AccessToken, g.TokenType, g.Expiry = t.AccessToken, t.TokenType, t.Expiry
	if t.RefreshToken != "" { // a refresh may not rotate it
		g.RefreshToken = t.RefreshToken
	}
}

// Secrets are the values of g no output may show.
func (g *Grant) Secrets() []string {
	var out []string
	for _, s := range []string{g.AccessToken, g.RefreshToken, g.ClientSecret, g.IDToken, g.IdPRefreshToken} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Store keeps grants, one file per server, in a directory of mode 0700
// whose files are 0600 and never written through a symbolic link.
type Store struct {
	Dir string
	// Kept, when set, is told the secrets of each grant saved: a run
	// that renews a token mid-run hides the new one from its tools'
	// output too.
	Kept func(secrets ...string)
}

// OpenStore is the store under ask's state directory (history.StateDir);
// a zero Store (no directory) keeps nothing.
func OpenStore(stateDir string) Store {
	if stateDir == "" {
		return Store{}
	}
	return Store{Dir: filepath.Join(stateDir, "mcp-auth")}
}

// Canonical is the form of a server URL grants are kept under: scheme
// and host lower case, no default port, query, fragment or trailing
// slash. An error says what is wrong with raw.
func Canonical(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("%q is no URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q is no http:// or https:// URL", raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	u.Host = host
	if port != "" {
		u.Host = host + ":" + port
		if strings.Contains(host, ":") {
			u.Host = "[" + host + "]:" + port
		}
	} else if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	}
	u.User, u.RawQuery, u.Fragment, u.RawFragment = nil, "", "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

func (s Store) path(server string) string {
	sum := sha256.Sum256([]byte(server))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:12])+".json")
}

// maxGrantSize bounds what Load reads: a grant is a few hundred bytes.
const maxGrantSize = 1 << 20

// Load is the grant kept for server (a canonical URL), nil when none is.
func (s Store) Load(server string) (*Grant, error) {
	if s.Dir == "" {
		return nil, nil
	}
	// O_NONBLOCK: a fifo planted in its place must not hang the run.
	f, err := os.OpenFile(s.path(server), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the sign-in for %s: %w", server, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() || info.Size() > maxGrantSize {
		return nil, fmt.Errorf("%s: not a sign-in ask wrote (remove it, then ask mcp login again)", f.Name())
	}
	if why := owned.Why(info); why != "" {
		return nil, fmt.Errorf("%s: %s, so someone else may have put it there (remove it, then ask mcp login again)", f.Name(), why)
	}
	if dir, err := os.Lstat(s.Dir); err != nil || !dir.IsDir() || owned.Why(dir) != "" {
		return nil, fmt.Errorf("%s: not a directory of yours that only you can write, so someone else may have put a sign-in there (remove it, then ask mcp login again)", s.Dir)
	}
	var g Grant
	if err := json.NewDecoder(f).Decode(&g); err != nil {
		return nil, fmt.Errorf("%s: %v (remove it, then ask mcp login again)", f.Name(), err)
	}
	if g.Server != server {
		return nil, nil // another server's, by a hash collision or a copied file
	}
	return &g, nil
}

// Save keeps g, replacing what was kept for its server: written to a new
// file 0600 beside it, then renamed over it, so a reader never sees half.
func (s Store) Save(g *Grant) error {
	if s.Dir == "" {
		return errors.New("no state directory to keep the sign-in in: set XDG_STATE_HOME or HOME")
	}
	if err := s.ensureDir(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, ".grant-*")
	if err != nil {
		return fmt.Errorf("keeping the sign-in: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("keeping the sign-in: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("keeping the sign-in: %w", err)
	}
	if s.Kept != nil {
		s.Kept(g.Secrets()...) // before the file holds them
	}
	if err := os.Rename(tmp.Name(), s.path(g.Server)); err != nil {
		return fmt.Errorf("keeping the sign-in: %w", err)
	}
	return nil
}

// ensureDir makes the store's directory 0700, and refuses one that is a
// symbolic link or open to others: a grant must not land where another
// user, or a checkout, chose.
func (s Store) ensureDir() error {
	if err := os.MkdirAll(filepath.Dir(s.Dir), 0o700); err != nil {
		return fmt.Errorf("keeping the sign-in: %w", err)
	}
	if err := os.Mkdir(s.Dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("keeping the sign-in: %w", err)
	}
	info, err := os.Lstat(s.Dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory (a symbolic link?): remove it", s.Dir)
	}
	if info.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(s.Dir, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// Remove forgets the grant for server; it reports whether there was one.
func (s Store) Remove(server string) (bool, error) {
	if s.Dir == "" {
		return false, nil
	}
	err := os.Remove(s.path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// List is every grant kept, by server URL.
func (s Store) List() ([]*Grant, error) {
	if s.Dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Grant
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.Dir, e.Name()))
		if err != nil || len(data) > maxGrantSize {
			continue
		}
		var g Grant
		if json.Unmarshal(data, &g) == nil && g.Server != "" && s.path(g.Server) == filepath.Join(s.Dir, e.Name()) {
			out = append(out, &g)
		}
	}
	slices.SortFunc(out, func(a, b *Grant) int { return strings.Compare(a.Server, b.Server) })
	return out, nil
}
