package mcpauth

import (
	"cmp"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Signing algorithms a client assertion may be signed with (RFC 7518 §3.1).
const (
	AlgES256 = "ES256" // ECDSA on P-256 with SHA-256: the default
	AlgRS256 = "RS256" // RSASSA-PKCS1-v1_5 with SHA-256
)

// AssertionType is the client_assertion_type of a signed JWT (RFC 7523 §2.2).
const AssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLife is how long an assertion is good for: one token request.
const assertionLife = 2 * time.Minute

// Signer signs client assertions with a private key (private_key_jwt).
type Signer struct {
	alg string
	key crypto.Signer
}

// LoadSigner reads the PEM private key at path for alg (ES256 when ""):
// a PKCS #8, SEC 1 (EC) or PKCS #1 (RSA) key. The file must be the
// user's alone: one that others may read or write is refused, as ssh
// refuses an unprotected key.
func LoadSigner(path, alg string) (*Signer, error) {
	if alg == "" {
		alg = AlgES256
	}
	if alg != AlgES256 && alg != AlgRS256 {
		return nil, fmt.Errorf("signing_algorithm %q: choose ES256 or RS256", alg)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("private_key_file: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("private_key_file: %w", err)
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("private_key_file %s: not a regular file", path)
	} else if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("private_key_file %s: others may read or change it (mode %04o): chmod 600 it", path, fi.Mode().Perm())
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("private_key_file: %w", err)
	}
	s, err := ParseSigner(data, alg)
	if err != nil {
		return nil, fmt.Errorf("private_key_file %s: %w", path, err)
	}
	return s, nil
}

// ParseSigner is the Signer of the PEM private key data for alg.
func ParseSigner(data []byte, alg string) (*Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block: expected a PEM private key")
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "ENCRYPTED PRIVATE KEY":
		return nil, errors.New("the key is encrypted: ask needs it unencrypted (keep the file private instead)")
	default:
		return nil, fmt.Errorf("a PEM %q block: expected a private key", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the private key: %w", err)
	}
	switch alg {
	case AlgES256:
		k, ok := key.(*ecdsa.PrivateKey)
		if !ok || k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("ES256 needs an EC key on P-256, the file holds %s", keyKind(key))
		}
		return &Signer{alg: alg, key: k}, nil
	case AlgRS256:
		k, ok := key.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("RS256 needs an RSA key, the file holds %s", keyKind(key))
		}
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("RS256 needs an RSA key of 2048 bits or more, the file's has %d", k.N.BitLen())
		}
		return &Signer{alg: alg, key: k}, nil
	}
	return nil, fmt.Errorf("signing_algorithm %q: choose ES256 or RS256", alg)
}

func keyKind(key any) string {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		return "an EC key on " + k.Curve.Params().Name
	case *rsa.PrivateKey:
		return "an RSA key"
	}
	return fmt.Sprintf("a %T key", key)
}

// Alg is the algorithm s signs with.
func (s *Signer) Alg() string { return s.alg }

// Public is the public half of s's key.
func (s *Signer) Public() crypto.PublicKey { return s.key.Public() }

// Assertion is a client assertion (RFC 7523 §3) for clientID to present
// to the authorization server audience: iss and sub are the client, aud
// the server's issuer identifier, with a fresh jti and a short life.
func (s *Signer) Assertion(clientID, audience string, now time.Time) (string, error) {
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	header, _ := json.Marshal(map[string]string{"alg": s.alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": clientID,
		"sub": clientID,
		"aud": audience,
		"iat": now.Unix(),
		"exp": now.Add(assertionLife).Unix(),
		"jti": hex.EncodeToString(jti),
	})
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signed))
	var sig []byte
	switch k := s.key.(type) {
	case *ecdsa.PrivateKey:
		r, ss, err := ecdsa.Sign(rand.Reader, k, sum[:])
		if err != nil {
			return "", err
		}
		// JWS takes R and S as 32 bytes each (RFC 7518 §3.4), not DER.
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
	case *rsa.PrivateKey:
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:]); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("cannot sign with %T", s.key)
	}
	return signed + "." + enc.EncodeToString(sig), nil
}

// jwtHandler gets a run's token by the client credentials grant, the
// client authenticating with a signed JWT (private_key_jwt).
type jwtHandler struct {
	label  string
	client Client
	signer *Signer
	httpc  *http.Client

	mu     sync.Mutex
	source oauth2.TokenSource
}

func (h *jwtHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.source == nil {
		return nil, nil
	}
	return h.source, nil
}

// Authorize finds the token endpoint from the refusal (the server's
// protected resource metadata, then its authorization server's metadata)
// and gets a token.
func (h *jwtHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, resp.Body)
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("%s: oauth: the server's WWW-Authenticate: %v", h.label, err)
	}
	t, err := discover(ctx, h.httpc, challenges, req.URL.String())
	if err != nil {
		return fmt.Errorf("%s: oauth: %w", h.label, err)
	}
	scopes := t.Scopes
	if len(h.client.Scopes) > 0 {
		scopes = h.client.Scopes
	}
	src := &assertionSource{ctx: context.WithValue(context.Background(), oauth2.HTTPClient, h.httpc),
		h: h, issuer: t.Issuer, tokenURL: t.TokenURL, scopes: scopes}
	tok, err := src.token(context.WithValue(ctx, oauth2.HTTPClient, h.httpc))
	if err != nil {
		return fmt.Errorf("%s: oauth: the client credentials token request: %w", h.label, err)
	}
	h.mu.Lock()
	h.source = oauth2.ReuseTokenSource(tok, src)
	h.mu.Unlock()
	return nil
}

// target is where a server's tokens come from: what its refusal and
// metadata (protected-resource, then authorization-server) say.
type target struct {
	Resource    string // the server's resource identifier (RFC 9728)
	Issuer      string // the authorization server's issuer identifier
	TokenURL    string
	AuthMethods []string // token_endpoint_auth_methods_supported
	Scopes      []string // those the refusal or the resource metadata ask for
}

// discover finds the target of the server at resource from the
// WWW-Authenticate challenges of its refusal.
func discover(ctx context.Context, httpc *http.Client, challenges []oauthex.Challenge, resource string) (target, error) {
	t := target{Resource: resource}
	var metaURL string
	for _, c := range challenges {
		if c.Scheme != "bearer" {
			continue
		}
		if u := c.Params["resource_metadata"]; u != "" && metaURL == "" {
			metaURL = u
		}
		if s := c.Params["scope"]; s != "" && t.Scopes == nil {
			t.Scopes = strings.Fields(s)
		}
	}
	ru, err := url.Parse(resource)
	if err != nil {
		return t, err
	}
	root := *ru
	root.Path, root.RawPath, root.RawQuery, root.Fragment = "", "", "", ""
	type try struct{ url, resource string }
	var tries []try
	if metaURL != "" {
		tries = append(tries, try{metaURL, resource})
	}
	pathed := root
	pathed.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	bare := root
	bare.Path = "/.well-known/oauth-protected-resource"
	tries = append(tries, try{pathed.String(), resource}, try{bare.String(), root.String()})
	authServer := root.String() // the 2025-03-26 fallback: the server's root
	for _, tr := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, tr.url, tr.resource, httpc)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return t, errors.New("the server's protected resource metadata names no authorization server")
		}
		authServer = prm.AuthorizationServers[0]
		t.Resource = cmp.Or(prm.Resource, t.Resource)
		if t.Scopes == nil {
			t.Scopes = prm.ScopesSupported
		}
		break
	}
	asm, err := auth.GetAuthServerMetadata(ctx, authServer, httpc)
	if err != nil {
		return t, fmt.Errorf("the authorization server's metadata: %w", err)
	}
	if asm == nil {
		t.Issuer, t.TokenURL = authServer, strings.TrimRight(authServer, "/")+"/token"
		return t, nil
	}
	if asm.TokenEndpoint == "" {
		return t, errors.New("the authorization server's metadata names no token endpoint")
	}
	t.Issuer, t.TokenURL, t.AuthMethods = cmp.Or(asm.Issuer, authServer), asm.TokenEndpoint, asm.TokenEndpointAuthMethodsSupported
	return t, nil
}

// assertionSource asks the token endpoint for a token, with a fresh
// assertion each time.
type assertionSource struct {
	ctx              context.Context
	h                *jwtHandler
	issuer, tokenURL string
	scopes           []string
}

func (s *assertionSource) Token() (*oauth2.Token, error) { return s.token(s.ctx) }

func (s *assertionSource) token(ctx context.Context) (*oauth2.Token, error) {
	a, err := s.h.signer.Assertion(s.h.client.ClientID, s.issuer, time.Now())
	if err != nil {
		return nil, fmt.Errorf("signing the client assertion: %w", err)
	}
	cfg := &clientcredentials.Config{
		ClientID:  s.h.client.ClientID,
		TokenURL:  s.tokenURL,
		Scopes:    s.scopes,
		AuthStyle: oauth2.AuthStyleInParams,
		EndpointParams: url.Values{
			"client_assertion_type": {AssertionType},
			"client_assertion":      {a},
		},
	}
	return cfg.Token(ctx)
}
