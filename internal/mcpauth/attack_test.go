package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A grant's file is read only when it is a regular file of this user's
// that nobody else can write, in a directory nobody else can write: else
// someone sharing the state directory plants a sign-in (their token, so
// the person's MCP calls land in their account; their token URL), or a
// fifo that hangs every run that uses the server.
func TestLoadRefusesWhatSomeoneElseCouldHavePlanted(t *testing.T) {
	t.Parallel()
	const server = "https://example.com/mcp"
	planted := func(t *testing.T, state string) Store {
		t.Helper()
		store := OpenStore(state)
		if err := store.Save(&Grant{Server: server, AccessToken: "planted-token"}); err != nil {
			t.Fatal(err)
		}
		return store
	}
	for name, plant := range map[string]func(t *testing.T, store Store){
		"a fifo": func(t *testing.T, store Store) {
			os.Remove(store.path(server))
			if err := syscall.Mkfifo(store.path(server), 0o600); err != nil {
				t.Skipf("no fifo here: %v", err)
			}
		},
		"a file others can write": func(t *testing.T, store Store) {
			os.Chmod(store.path(server), 0o666)
		},
		"a directory others can write": func(t *testing.T, store Store) {
			os.Chmod(store.Dir, 0o777)
		},
		"another user's file": func(t *testing.T, store Store) {
			if os.Getuid() != 0 {
				t.Skip("needs root to give the file to another user")
			}
			if err := os.Chown(store.path(server), 65534, 65534); err != nil {
				t.Skip(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := planted(t, t.TempDir())
			plant(t, store)
			done := make(chan error, 1)
			go func() {
				g, err := store.Load(server)
				if err == nil && g != nil {
					err = errPlantedRead
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || err == errPlantedRead || !strings.Contains(err.Error(), "ask mcp login") {
					t.Errorf("Load = %v, want it refused, saying how to sign in again", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Load waited on the planted file")
			}
		})
	}
}

// errPlantedRead is Load reading the planted grant as the person's.
var errPlantedRead = errors.New("the planted grant was read")

// The store's own files, as Save leaves them, still load.
func TestLoadReadsItsOwnGrant(t *testing.T) {
	t.Parallel()
	store := OpenStore(filepath.Join(t.TempDir(), "state"))
	if err := store.Save(&Grant{Server: "https://example.com/mcp", AccessToken: "mine"}); err != nil {
		t.Fatal(err)
	}
	if g, err := store.Load("https://example.com/mcp"); err != nil || g == nil || g.AccessToken != "mine" {
		t.Fatalf("Load = %+v, %v", g, err)
	}
}

// A malicious authorization server names an authorization endpoint that
// is not a web page: file:, a custom scheme whose handler runs something,
// or a word that xdg-open reads as an option. The browser is never asked
// to open it, and the sign-in stops naming the endpoint (the SDK's
// metadata check holds this; the test keeps it held).
func TestLoginOpensOnlyWebURLs(t *testing.T) {
	t.Parallel()
	for _, endpoint := range []string{"file:///etc/passwd", "x-evil-handler:run?cmd=id", "--help", "javascript:alert(1)"} {
		t.Run(endpoint, func(t *testing.T) {
			t.Parallel()
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
				writeJSON(w, map[string]any{"issuer": base, "authorization_endpoint": endpoint,
					"token_endpoint": base + "/token", "registration_endpoint": base + "/register",
					"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
					"token_endpoint_auth_methods_supported": []string{"none"}})
			})
			mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
				var meta map[string]any
				json.NewDecoder(r.Body).Decode(&meta)
				meta["client_id"] = "test-client"
				w.WriteHeader(http.StatusCreated)
				writeJSON(w, meta)
			})
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, base))
				http.Error(w, "sign in first", http.StatusUnauthorized)
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			base = strings.Replace(srv.URL, "localhost", "127.0.0.1", 1)
			server, _ := Canonical(base + "/mcp")
			var opened []string
			var notes strings.Builder
			l := Login{Server: server, Version: "t", Wait: 2 * time.Second, Notes: &notes,
				Open: func(u string) error { opened = append(opened, u); return nil }}
			_, err := l.Run(context.Background(), OpenStore(t.TempDir()))
			for _, u := range opened {
				if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
					t.Errorf("the browser was asked to open %q", u)
				}
			}
			if err == nil || !strings.Contains(err.Error(), "authorization_endpoint") {
				t.Errorf("Login = %v, want the authorization endpoint refused", err)
			}
		})
	}
}
