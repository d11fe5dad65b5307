package mcpauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func writeKey(t *testing.T, key any, mode os.FileMode) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// verify checks a JWT's signature with pub and returns its header and claims.
func verify(t *testing.T, jwt string, pub crypto.PublicKey) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("%d parts in %q", len(parts), jwt)
	}
	dec := func(s string) []byte {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return b
	}
	json.Unmarshal(dec(parts[0]), &header)
	if err := json.Unmarshal(dec(parts[1]), &claims); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	sig := dec(parts[2])
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if len(sig) != 64 {
			t.Fatalf("an ES256 signature of %d bytes", len(sig))
		}
		if !ecdsa.Verify(k, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Fatal("the ES256 signature does not verify")
		}
	case *rsa.PublicKey:
		if err := rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig); err != nil {
			t.Fatalf("the RS256 signature does not verify: %v", err)
		}
	}
	return header, claims
}

func TestAssertionES256(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	s, err := LoadSigner(writeKey(t, key, 0o600), "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Alg() != AlgES256 {
		t.Fatalf("default algorithm %s", s.Alg())
	}
	now := time.Unix(1_800_000_000, 0)
	a, err := s.Assertion("ci-bot", "https://as.example", now)
	if err != nil {
		t.Fatal(err)
	}
	header, claims := verify(t, a, &key.PublicKey)
	if header["alg"] != "ES256" || header["typ"] != "JWT" {
		t.Errorf("header %v", header)
	}
	want := map[string]any{"iss": "ci-bot", "sub": "ci-bot", "aud": "https://as.example",
		"iat": float64(now.Unix()), "exp": float64(now.Add(assertionLife).Unix())}
	for k, v := range want {
		if claims[k] != v {
			t.Errorf("%s = %v, want %v", k, claims[k], v)
		}
	}
	b, _ := s.Assertion("ci-bot", "https://as.example", now)
	_, claims2 := verify(t, b, &key.PublicKey)
	if jti, _ := claims["jti"].(string); jti == "" || jti == claims2["jti"] {
		t.Errorf("jti %q then %q: want a fresh one each time", claims["jti"], claims2["jti"])
	}
}

func TestAssertionRS256(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	s, err := LoadSigner(writeKey(t, key, 0o600), AlgRS256)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Assertion("ci-bot", "https://as.example", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if header, _ := verify(t, a, &key.PublicKey); header["alg"] != "RS256" {
		t.Errorf("header %v", header)
	}
}

func TestLoadSignerRefuses(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	ecPath := writeKey(t, ec, 0o600)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	os.WriteFile(garbage, []byte("not a key"), 0o600)
	cases := []struct {
		name, path, alg, want string
	}{
		{"RS256 with an EC key", ecPath, AlgRS256, "RS256 needs an RSA key, the file holds an EC key on P-256"},
		{"ES256 on P-384", writeKey(t, ec384, 0o600), AlgES256, "ES256 needs an EC key on P-256, the file holds an EC key on P-384"},
		{"an algorithm not offered", ecPath, "HS256", `signing_algorithm "HS256": choose ES256 or RS256`},
		{"a missing file", filepath.Join(t.TempDir(), "none.pem"), "", "private_key_file: open"},
		{"not PEM", garbage, "", "no PEM block"},
	}
	if runtime.GOOS != "windows" {
		cases = append(cases, struct{ name, path, alg, want string }{
			"a file others may read", writeKey(t, ec, 0o644), "", "others may read or change it (mode 0644): chmod 600 it"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadSigner(c.path, c.alg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one saying %q", err, c.want)
			}
		})
	}
}

func TestClientCheckKey(t *testing.T) {
	for _, c := range []struct {
		client Client
		want   string
	}{
		{Client{GrantType: GrantClientCredentials, ClientID: "a", PrivateKeyFile: "/k.pem"}, ""},
		{Client{GrantType: GrantClientCredentials, ClientID: "a", PrivateKeyFile: "/k.pem", SigningAlgorithm: "RS256"}, ""},
		{Client{GrantType: GrantClientCredentials, ClientID: "a", PrivateKeyFile: "/k.pem", ClientSecret: "s"}, "one of client_secret and private_key_file"},
		{Client{GrantType: GrantClientCredentials, ClientID: "a"}, "one of client_secret and private_key_file"},
		{Client{ClientID: "a", PrivateKeyFile: "/k.pem"}, `only with grant_type "client_credentials"`},
		{Client{GrantType: GrantClientCredentials, ClientID: "a", PrivateKeyFile: "/k.pem", SigningAlgorithm: "PS256"}, "choose ES256 or RS256"},
		{Client{GrantType: GrantClientCredentials, ClientID: "a", ClientSecret: "s", SigningAlgorithm: "ES256"}, "signing_algorithm without private_key_file"},
	} {
		if got := c.client.Check(); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.client, got, c.want)
		}
	}
}

// TestJWTHandler runs the grant against an authorization server that
// checks the assertion as RFC 7523 has it.
func TestJWTHandler(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	var srv *httptest.Server
	var got url.Values
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}, "scopes_supported": []string{"mcp:tools"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "token_endpoint": srv.URL + "/oauth/token",
			"authorization_endpoint": srv.URL + "/authorize", "response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"private_key_jwt"}})
	})
	mux.HandleFunc("/oauth/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		got = r.PostForm
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"tok-1","token_type":"Bearer","expires_in":3600}`))
	})
	srv = httptest.NewServer(mux)
	defer srv.Close()

	path := writeKey(t, key, 0o600)
	h, err := ForRun(Store{}, srv.URL+"/mcp", "bot", Client{GrantType: GrantClientCredentials, ClientID: "ci-bot", PrivateKeyFile: path}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", nil)
	resp := &http.Response{StatusCode: 401, Header: http.Header{"Www-Authenticate": {`Bearer resource_metadata="` + srv.URL + `/.well-known/oauth-protected-resource/mcp"`}},
		Body: io.NopCloser(strings.NewReader(""))}
	if err := h.Authorize(context.Background(), req, resp); err != nil {
		t.Fatal(err)
	}
	ts, _ := h.TokenSource(context.Background())
	if tok, err := ts.Token(); err != nil || tok.AccessToken != "tok-1" {
		t.Fatalf("token %v, %v", tok, err)
	}
	if got.Get("grant_type") != "client_credentials" || got.Get("client_assertion_type") != AssertionType ||
		got.Get("scope") != "mcp:tools" || got.Get("client_secret") != "" {
		t.Errorf("token request %v", got)
	}
	_, claims := verify(t, got.Get("client_assertion"), &key.PublicKey)
	if claims["aud"] != srv.URL || claims["iss"] != "ci-bot" || claims["sub"] != "ci-bot" {
		t.Errorf("claims %v", claims)
	}

	// A key the run cannot read is said before any request.
	if _, err := ForRun(Store{}, srv.URL+"/mcp", "bot", Client{GrantType: GrantClientCredentials, ClientID: "ci-bot", PrivateKeyFile: filepath.Join(t.TempDir(), "gone.pem")}, nil); err == nil ||
		!strings.Contains(err.Error(), "bot: oauth: private_key_file") {
		t.Errorf("a missing key: %v", err)
	}
}
