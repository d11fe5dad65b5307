package runtest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Enterprise is an MCP server whose authorization server takes ID-JAGs
// (enterprise-managed authorization), with the enterprise's identity
// provider beside it, all on loopback. The provider signs the person in
// (OpenID Connect, approving at once), renews ID tokens with its refresh
// token, and exchanges an ID token for an ID-JAG; the authorization
// server takes an ID-JAG the provider issued for it and for this server,
// from the client it names, authenticated with HTTP Basic.
type Enterprise struct {
	URL       string // the MCP endpoint
	IdPIssuer string
	Issuer    string // the authorization server's

	// The clients: ask's at the authorization server, and at the provider.
	ClientID, ClientSecret, IdPClientID string

	mu sync.Mutex
	// IDTokenLife is how long an ID token the provider issues lasts.
	IDTokenLife time.Duration
	// Deny makes the provider refuse every exchange (its policy);
	// Withhold is a scope its policy never grants.
	Deny     bool
	Withhold string
	// CallScope, when set, is a scope a tools/call needs: a token without
	// it is refused with HTTP 403 insufficient_scope.
	CallScope string
	// Exchanges, IdPRefreshes and SignIns count what the provider did.
	Exchanges, IdPRefreshes, SignIns int
	// Requests are the paths asked of any of the three, in order.
	Requests []string

	jags       map[string]jag // ID-JAG → what it grants
	idTokens   map[string]bool
	idpRefresh string
	access     string
	granted    string // the scope of access
	issued     int
}

type jag struct{ audience, resource, clientID, scope string }

// Access is the access token the MCP server takes now.
func (e *Enterprise) Access() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.access
}

// ExpireAccess makes the MCP server refuse its current access token.
func (e *Enterprise) ExpireAccess() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.access = "expired-" + e.access
}

// Count reads a counter under the lock.
func (e *Enterprise) Count(c *int) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return *c
}

// Set changes the provider's behaviour under the lock.
func (e *Enterprise) Set(f func(*Enterprise)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(e)
}

// IDToken is an ID token the provider issued, as its own tool would
// print one after a sign-in.
func (e *Enterprise) IDToken() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.newIDToken()
}

// FakeJWT is a JWT-shaped token whose claims are claims; its signature
// is no signature: the servers here know their tokens by value.
func FakeJWT(claims map[string]any) string {
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT"})
	c, _ := json.Marshal(claims)
	return enc.EncodeToString(h) + "." + enc.EncodeToString(c) + ".c2lnbmF0dXJl"
}

func (e *Enterprise) newIDToken() string {
	life := e.IDTokenLife
	if life == 0 {
		life = time.Hour
	}
	t := FakeJWT(map[string]any{"iss": e.IdPIssuer, "sub": "user@example.com", "aud": e.IdPClientID,
		"iat": time.Now().Unix(), "exp": time.Now().Add(life).Unix(), "nonce": fmt.Sprint(len(e.idTokens))})
	e.idTokens[t] = true
	return t
}

// StartEnterprise starts the three servers.
func StartEnterprise(t *testing.T) *Enterprise {
	t.Helper()
	e := &Enterprise{ClientID: "ask-at-the-server", ClientSecret: "server-client-secret-0000", IdPClientID: "ask-at-the-idp",
		jags: map[string]jag{}, idTokens: map[string]bool{}}
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	refuse := func(w http.ResponseWriter, code string) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": code})
	}
	serve := func(mux *http.ServeMux) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.mu.Lock()
			e.Requests = append(e.Requests, r.Method+" "+r.URL.Path)
			e.mu.Unlock()
			mux.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv
	}

	// The identity provider.
	idp := http.NewServeMux()
	idp.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"issuer": e.IdPIssuer, "authorization_endpoint": e.IdPIssuer + "/authorize",
			"token_endpoint": e.IdPIssuer + "/token", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "scopes_supported": []string{"openid", "offline_access"}})
	})
	codes := map[string]bool{}
	idp.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		to, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || to.Hostname() != "127.0.0.1" || q.Get("client_id") != e.IdPClientID ||
			!strings.Contains(" "+q.Get("scope")+" ", " openid ") || q.Get("code_challenge") == "" {
			http.Error(w, "want a loopback redirect, the client, scope openid and PKCE", http.StatusBadRequest)
			return
		}
		e.mu.Lock()
		code := fmt.Sprintf("idp-code-%d", len(codes))
		codes[code] = true
		e.mu.Unlock()
		v := to.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	idp.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		f := r.PostForm
		e.mu.Lock()
		defer e.mu.Unlock()
		if f.Get("client_id") != e.IdPClientID {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			return
		}
		switch f.Get("grant_type") {
		case "authorization_code":
			if !codes[f.Get("code")] || f.Get("code_verifier") == "" {
				refuse(w, "invalid_grant")
				return
			}
			delete(codes, f.Get("code"))
			e.SignIns++
			e.idpRefresh = fmt.Sprintf("idp-refresh-%d-secret", e.SignIns)
			writeJSON(w, 200, map[string]any{"access_token": "idp-access", "token_type": "Bearer", "expires_in": 3600,
				"id_token": e.newIDToken(), "refresh_token": e.idpRefresh})
		case "refresh_token":
			if e.idpRefresh == "" || f.Get("refresh_token") != e.idpRefresh {
				refuse(w, "invalid_grant")
				return
			}
			e.IdPRefreshes++
			writeJSON(w, 200, map[string]any{"access_token": "idp-access", "token_type": "Bearer", "expires_in": 3600,
				"id_token": e.newIDToken()})
		case "urn:ietf:params:oauth:grant-type:token-exchange":
			if f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag" ||
				f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token" {
				refuse(w, "invalid_request")
				return
			}
			if !e.idTokens[f.Get("subject_token")] || e.Deny {
				refuse(w, "invalid_grant")
				return
			}
			if exp, ok := claim(f.Get("subject_token"), "exp").(float64); !ok || time.Unix(int64(exp), 0).Before(time.Now()) {
				refuse(w, "invalid_grant")
				return
			}
			e.Exchanges++
			grant := FakeJWT(map[string]any{"iss": e.IdPIssuer, "sub": "user@example.com", "aud": f.Get("audience"),
				"resource": f.Get("resource"), "client_id": e.ClientID, "jti": fmt.Sprint(e.Exchanges),
				"exp": time.Now().Add(5 * time.Minute).Unix()})
			var scopes []string
			for _, sc := range strings.Fields(f.Get("scope")) {
				if sc != e.Withhold {
					scopes = append(scopes, sc)
				}
			}
			e.jags[grant] = jag{audience: f.Get("audience"), resource: f.Get("resource"), clientID: e.ClientID, scope: strings.Join(scopes, " ")}
			writeJSON(w, 200, map[string]any{"access_token": grant, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
				"token_type": "N_A", "expires_in": 300})
		default:
			refuse(w, "unsupported_grant_type")
		}
	})
	idpSrv := serve(idp)
	e.IdPIssuer = strings.Replace(idpSrv.URL, "localhost", "127.0.0.1", 1)

	// The MCP server, with its authorization server on the same host.
	s := sdk.NewServer(&sdk.Implementation{Name: "enterprise-test", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "Say who is signed in", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "signed in through the enterprise"}}}, nil, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"resource": e.URL, "authorization_servers": []string{e.Issuer}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"issuer": e.Issuer, "token_endpoint": e.Issuer + "/token",
			"grant_types_supported":                 []string{"urn:ietf:params:oauth:grant-type:jwt-bearer"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"},
			"code_challenge_methods_supported":      []string{"S256"}, "response_types_supported": []string{"code"}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, ok := r.BasicAuth()
		e.mu.Lock()
		defer e.mu.Unlock()
		if !ok || id != e.ClientID || secret != e.ClientSecret {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			return
		}
		if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
			refuse(w, "unsupported_grant_type")
			return
		}
		g, ok := e.jags[r.PostForm.Get("assertion")]
		if !ok || g.audience != e.Issuer || g.resource != e.URL || g.clientID != id {
			refuse(w, "invalid_grant")
			return
		}
		delete(e.jags, r.PostForm.Get("assertion")) // used once
		e.issued++
		e.access, e.granted = fmt.Sprintf("enterprise-access-%d-secret", e.issued), g.scope
		writeJSON(w, 200, map[string]any{"access_token": e.access, "token_type": "Bearer", "expires_in": 3600, "scope": e.granted})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		ok := e.access != "" && r.Header.Get("Authorization") == "Bearer "+e.access
		need := e.CallScope
		stepUp := need != "" && !strings.Contains(" "+e.granted+" ", " "+need+" ")
		e.mu.Unlock()
		if ok && stepUp && isCall(r) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, need, e.Issuer))
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, e.Issuer))
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	srv := serve(mux)
	e.Issuer = strings.Replace(srv.URL, "localhost", "127.0.0.1", 1)
	e.URL = e.Issuer + "/mcp"
	return e
}

// isCall reports whether r is a JSON-RPC tools/call; its body stays
// readable.
func isCall(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct{ Method string }
	return json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call"
}

// claim is one claim of a FakeJWT, nil when it has none.
func claim(token, name string) any {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil
	}
	var claims map[string]any
	json.Unmarshal(data, &claims)
	return claims[name]
}
