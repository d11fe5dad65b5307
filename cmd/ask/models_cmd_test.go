package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
)

// listingServer answers each listing request with the fixture its route
// names ("GET /models?limit=1000" → file), checking the credentials the
// provider's documentation asks for; the requests it saw are kept.
type listingServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func startListing(t *testing.T, header, value string, routes map[string]string) *listingServer {
	t.Helper()
	ls := &listingServer{}
	ls.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := r.Method + " " + r.URL.RequestURI()
		ls.mu.Lock()
		ls.seen = append(ls.seen, route)
		ls.mu.Unlock()
		if header != "" && r.Header.Get(header) != value {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"type":"authentication_error","message":"invalid x-api-key"}}`))
			return
		}
		if header == "x-api-key" && r.Header.Get("anthropic-version") == "" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"type":"invalid_request_error","message":"anthropic-version: header is required"}}`))
			return
		}
		file, ok := routes[route]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"message":"no route ` + route + `"}}`))
			return
		}
		b, err := os.ReadFile(filepath.Join("..", "..", "internal", "providers", "testdata", "models", file))
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(ls.Close)
	return ls
}

// `ask models` reads each provider's recorded listing through its own
// endpoint, credentials and paging, and prints the models as JSON in a
// pipe and as a table on a terminal.
func TestModelsCommand(t *testing.T) {
	t.Parallel()
	const key = "fake-test-key-for-listing-0000"
	tests := []struct {
		provider, keyVar string
		header, value    string
		routes           map[string]string
		wantIDs          []string
		wantTable        []string
	}{
		{"openai", "OPENAI_API_KEY", "Authorization", "Bearer " + key,
			map[string]string{"GET /models": "openai.json"},
			[]string{"gpt-4.1", "gpt-4.1-mini", "text-embedding-3-small"}, []string{"OWNED BY", "2025-04-10T20:22:22Z"}},
		{"openai-responses", "OPENAI_API_KEY", "Authorization", "Bearer " + key,
			map[string]string{"GET /models": "openai.json"},
			[]string{"gpt-4.1", "gpt-4.1-mini", "text-embedding-3-small"}, nil},
		{"deepseek", "DEEPSEEK_API_KEY", "Authorization", "Bearer " + key,
			map[string]string{"GET /models": "deepseek.json"},
			[]string{"deepseek-chat", "deepseek-reasoner"}, nil},
		{"moonshot", "MOONSHOT_API_KEY", "Authorization", "Bearer " + key,
			map[string]string{"GET /models": "openai.json"}, []string{"gpt-4.1", "gpt-4.1-mini", "text-embedding-3-small"}, nil},
		{"lmstudio", "", "", "",
			map[string]string{"GET /models": "deepseek.json"}, []string{"deepseek-chat", "deepseek-reasoner"}, nil},
		{"openrouter", "OPENROUTER_API_KEY", "Authorization", "Bearer " + key,
			map[string]string{"GET /models": "openrouter.json"},
			[]string{"openai/gpt-4.1", "some-lab/tiny-chat", "openrouter/auto"},
			[]string{"CONTEXT", "TOOLS", "$/M IN", "1047576", "yes", "OpenAI: GPT-4.1"}},
		{"anthropic", "ANTHROPIC_API_KEY", "x-api-key", key,
			map[string]string{
				"GET /models?limit=1000":                                   "anthropic-page1.json",
				"GET /models?limit=1000&after_id=claude-opus-4-1-20250805": "anthropic-page2.json",
			},
			[]string{"claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-3-5-haiku-20241022"},
			[]string{"Claude Haiku 3.5", "200000"}},
		{"gemini", "GEMINI_API_KEY", "x-goog-api-key", key,
			map[string]string{
				"GET /models?pageSize=1000": "gemini-page1.json",
				"GET /models?pageSize=1000&pageToken=Ch5tb2RlbHMvZ2VtaW5pLWVtYmVkZGluZy0wMDE%3D": "gemini-page2.json",
			},
			[]string{"gemini-2.5-flash", "gemini-2.5-pro"}, []string{"MAX OUTPUT", "65536"}},
		{"ollama", "", "", "",
			map[string]string{"GET /api/tags": "ollama.json"},
			[]string{"qwen3:8b", "llama3.2:latest"}, []string{"4.9 GiB", "qwen3:8b (8.2B Q4_K_M)"}},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			t.Parallel()
			srv := startListing(t, tt.header, tt.value, tt.routes)
			vars := map[string]string{"ASK_BASE_URL": srv.URL}
			if tt.keyVar != "" {
				vars[tt.keyVar] = key
			}
			r := runAsk(t, askEnv{env: vars}, "models", "-p", tt.provider)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var models []providers.Model
			if err := json.Unmarshal([]byte(r.stdout), &models); err != nil {
				t.Fatalf("stdout is not a JSON array: %v\n%s", err, r.stdout)
			}
			var ids []string
			for _, m := range models {
				ids = append(ids, m.ID)
			}
			if strings.Join(ids, " ") != strings.Join(tt.wantIDs, " ") {
				t.Errorf("ids %v, want %v", ids, tt.wantIDs)
			}
			if len(srv.seen) != len(tt.routes) {
				t.Errorf("requests %v, want one for each of %v", srv.seen, tt.routes)
			}
			table := runAsk(t, askEnv{env: vars, tty: true}, "models", "-p", tt.provider)
			for _, want := range append([]string{"ID", tt.wantIDs[0]}, tt.wantTable...) {
				if !strings.Contains(table.stdout, want) {
					t.Errorf("table lacks %q:\n%s", want, table.stdout)
				}
			}
			if strings.Contains(r.stdout+r.stderr+table.stdout+table.stderr, key) {
				t.Errorf("the key is in the output")
			}
		})
	}
}

// A missing key names its variable (exit 4); a rejected one exits 4, a
// server error 3, a provider without a listing is a usage error.
// OpenRouter's listing is public: ask models needs no key for it.
func TestModelsWithoutKey(t *testing.T) {
	t.Parallel()
	srv := startListing(t, "", "", map[string]string{"GET /models": "openrouter.json"})
	r := runAsk(t, askEnv{env: map[string]string{"ASK_BASE_URL": srv.URL}}, "models", "-p", "openrouter", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"openai/gpt-4.1"`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestModelsErrors(t *testing.T) {
	t.Parallel()
	srv := startListing(t, "x-api-key", "the-right-key-0000", map[string]string{"GET /models?limit=1000": "anthropic-page2.json"})
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"error":{"message":"overloaded"}}`))
	}))
	t.Cleanup(broken.Close)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`<html>`)) }))
	t.Cleanup(garbage.Close)
	tests := []struct {
		name string
		vars map[string]string
		args []string
		code int
		want string
	}{
		{"missing key", map[string]string{"ASK_BASE_URL": srv.URL}, []string{"-p", "anthropic"}, exitAuth, "ANTHROPIC_API_KEY"},
		{"rejected key", map[string]string{"ASK_BASE_URL": srv.URL, "ANTHROPIC_API_KEY": "a-wrong-key-0000"}, []string{"-p", "anthropic"}, exitAuth, "HTTP 401"},
		{"server error", map[string]string{"ASK_BASE_URL": broken.URL}, []string{"-p", "ollama", "--retries", "0"}, exitProvider, "HTTP 500"},
		{"not a listing", map[string]string{"ASK_BASE_URL": garbage.URL}, []string{"-p", "lmstudio"}, exitProvider, "not JSON"},
		{"local program", nil, []string{"-p", "command"}, exitUsage, "no model listing"},
		{"arguments", nil, []string{"-p", "ollama", "extra"}, exitUsage, "takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runAsk(t, askEnv{env: tt.vars}, append([]string{"models"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit %d and %q", r.code, r.stderr, r.stdout, tt.code, tt.want)
			}
		})
	}
}
