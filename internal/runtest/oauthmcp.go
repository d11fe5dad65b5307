package runtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// OAuthMCP is an MCP server behind OAuth 2.1 on loopback, with its own
// authorization server: protected-resource and authorization-server
// metadata, dynamic client registration, an authorization endpoint that
// approves at once (the person signing in), PKCE checked at the token
// endpoint, and refresh. Its one tool, whoami, is read-only.
type OAuthMCP struct {
	URL string // the MCP endpoint
	mu  sync.Mutex
	// Access is the access token the server takes now; Refreshes counts
	// the refresh grants it answered.
	access, refresh string
	issued          int
	Refreshes       int
	// Requests are the paths asked, in order.
	Requests  []string
	challenge map[string]string // code → its PKCE challenge
	scope     map[string]string // code → the scope asked for
	granted   string            // the scope the current token has
	// callScope, when set, is a scope a tools/call needs (step-up).
	callScope string
}

// NeedScopeToCall makes a tools/call need scope: a token without it is
// refused with HTTP 403 insufficient_scope, as a server that steps up.
func (o *OAuthMCP) NeedScopeToCall(scope string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.callScope = scope
}

// Access is the access token the server takes now ("" before a sign-in).
func (o *OAuthMCP) Access() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.access
}

// Expire makes the server refuse the current access token, as when it
// has expired, so that a client must refresh.
func (o *OAuthMCP) Expire() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.access = "expired-" + o.access
}

// StartOAuthMCP starts the server.
func StartOAuthMCP(t *testing.T) *OAuthMCP {
	t.Helper()
	o := &OAuthMCP{challenge: map[string]string{}, scope: map[string]string{}}
	s := sdk.NewServer(&sdk.Implementation{Name: "oauth-test", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "Say who is signed in", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "signed in as the test user"}}}, nil, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	var base string
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	prm := func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
	}
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", prm)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", prm)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"issuer": base, "authorization_endpoint": base + "/authorize",
			"token_endpoint": base + "/token", "registration_endpoint": base + "/register",
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"}})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var meta map[string]any
		json.NewDecoder(r.Body).Decode(&meta)
		meta["client_id"] = "test-client"
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, meta)
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") != base+"/mcp" {
			http.Error(w, "want PKCE (S256) and the resource parameter", http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		code := fmt.Sprintf("code-%d", len(o.challenge)+1)
		o.challenge[code] = q.Get("code_challenge")
		o.scope[code] = q.Get("scope")
		o.mu.Unlock()
		to, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || to.Hostname() != "127.0.0.1" {
			http.Error(w, "want a loopback redirect", http.StatusBadRequest)
			return
		}
		v := to.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		o.mu.Lock()
		defer o.mu.Unlock()
		granted := o.granted
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			granted = o.scope[r.PostForm.Get("code")]
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if want := o.challenge[r.PostForm.Get("code")]; want == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != want {
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]string{"error": "invalid_grant"})
				return
			}
		case "refresh_token":
			if o.refresh == "" || r.PostForm.Get("refresh_token") != o.refresh {
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]string{"error": "invalid_grant"})
				return
			}
			o.Refreshes++
		default:
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		o.issued++
		o.granted = granted
		o.access = fmt.Sprintf("test-access-token-%d-secret", o.issued)
		o.refresh = fmt.Sprintf("test-refresh-token-%d-secret", o.issued)
		writeJSON(w, map[string]any{"access_token": o.access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": o.refresh})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		ok := o.access != "" && r.Header.Get("Authorization") == "Bearer "+o.access
		need := o.callScope
		stepUp := need != "" && !strings.Contains(" "+o.granted+" ", " "+need+" ")
		o.mu.Unlock()
		if ok && stepUp && isCall(r) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, need, base))
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, base))
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.Requests = append(o.Requests, r.Method+" "+r.URL.Path)
		o.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	base = strings.Replace(srv.URL, "localhost", "127.0.0.1", 1)
	o.URL = base + "/mcp"
	return o
}

// FollowRedirects is a browser with a person who signs in at once: it
// opens url and follows its redirects back to the loopback port.
func FollowRedirects(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the sign-in ended with HTTP %d", resp.StatusCode)
	}
	return nil
}
