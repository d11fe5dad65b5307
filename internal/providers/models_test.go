package providers_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

func lister(t *testing.T, protocol string) providers.ModelLister {
	t.Helper()
	p, err := catalog.NewProtocol(protocol)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := p.(providers.ModelLister)
	if !ok {
		t.Fatalf("%s lists no models", protocol)
	}
	return l
}

func modelsFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "models", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// Each protocol reads its provider's documented listing into the same
// normalized models, and says where the next page starts.
func TestParseModels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		protocol, fixture string
		want              []providers.Model
		next              string
	}{
		{"openai", "openai.json", []providers.Model{
			{ID: "gpt-4.1", Name: "gpt-4.1", Created: "2025-04-10T20:22:22Z", OwnedBy: "system"},
			{ID: "gpt-4.1-mini", Name: "gpt-4.1-mini", Created: "2025-04-10T20:49:33Z", OwnedBy: "system"},
			{ID: "text-embedding-3-small", Name: "text-embedding-3-small", Created: "2024-01-22T18:43:17Z", OwnedBy: "system"},
		}, ""},
		{"responses", "deepseek.json", []providers.Model{
			{ID: "deepseek-chat", Name: "deepseek-chat", OwnedBy: "deepseek"},
			{ID: "deepseek-reasoner", Name: "deepseek-reasoner", OwnedBy: "deepseek"},
		}, ""},
		{"openai", "openrouter.json", []providers.Model{
			{ID: "openai/gpt-4.1", Name: "OpenAI: GPT-4.1", ContextLength: 1047576, MaxOutputTokens: 32768, Tools: yes(),
				InputPrice: "2", OutputPrice: "8", Created: "2025-04-14T17:23:05Z"},
			{ID: "some-lab/tiny-chat", Name: "Some Lab: Tiny Chat", ContextLength: 8192, Tools: no(),
				InputPrice: "0", OutputPrice: "0", Created: "2023-11-14T22:13:20Z"},
			{ID: "openrouter/auto", Name: "Auto Router", ContextLength: 2000000, Tools: no(), Created: "2023-11-08T00:00:00Z"},
		}, ""},
		{"anthropic", "anthropic-page1.json", []providers.Model{
			{ID: "claude-sonnet-4-5-20250929", Name: "Claude Sonnet 4.5", Created: "2025-09-29T00:00:00Z", ContextLength: 200000, MaxOutputTokens: 64000},
			{ID: "claude-opus-4-1-20250805", Name: "Claude Opus 4.1", Created: "2025-08-05T00:00:00Z"},
		}, "claude-opus-4-1-20250805"},
		{"anthropic", "anthropic-page2.json", []providers.Model{
			{ID: "claude-3-5-haiku-20241022", Name: "Claude Haiku 3.5", Created: "2024-10-22T00:00:00Z"},
		}, ""},
		{"gemini", "gemini-page1.json", []providers.Model{
			{ID: "gemini-2.5-flash", Name: "Gemini 2.5 Flash", ContextLength: 1048576, MaxOutputTokens: 65536},
		}, "Ch5tb2RlbHMvZ2VtaW5pLWVtYmVkZGluZy0wMDE="},
		{"ollama", "ollama.json", []providers.Model{
			{ID: "qwen3:8b", Name: "qwen3:8b (8.2B Q4_K_M)", Created: "2025-10-03T23:34:03.409490317-07:00", Size: 5225388164},
			{ID: "llama3.2:latest", Name: "llama3.2:latest (3.2B Q4_K_M)", Created: "2025-06-01T10:00:00Z", Size: 2019393189},
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.protocol+"/"+tt.fixture, func(t *testing.T) {
			t.Parallel()
			got, next, err := lister(t, tt.protocol).ParseModels(modelsFixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) || next != tt.next {
				t.Errorf("got %+v, next %q\nwant %+v, next %q", got, next, tt.want, tt.next)
			}
		})
	}
}

// A body that is not a listing is malformed, never an empty list.
func TestParseModelsMalformed(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"openai", "anthropic", "gemini", "ollama"} {
		for _, body := range []string{`<html>`, `{"data": 3, "models": 3}`} {
			if _, _, err := lister(t, protocol).ParseModels([]byte(body)); err == nil {
				t.Errorf("%s: %s parsed", protocol, body)
			}
		}
	}
	if _, _, err := lister(t, "anthropic").ParseModels([]byte(`{"data": [], "has_more": true}`)); err == nil {
		t.Errorf("anthropic: more pages with no last_id parsed")
	}
}

// The listing URLs, with their paging.
func TestModelsURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ protocol, base, page, want string }{
		{"openai", "https://api.openai.com/v1/", "", "https://api.openai.com/v1/models"},
		{"responses", "https://api.openai.com/v1", "", "https://api.openai.com/v1/models"},
		{"anthropic", "https://api.anthropic.com/v1", "", "https://api.anthropic.com/v1/models?limit=1000"},
		{"anthropic", "https://api.anthropic.com/v1", "claude x&y", "https://api.anthropic.com/v1/models?limit=1000&after_id=claude+x%26y"},
		{"gemini", "https://g/v1beta", "tok=", "https://g/v1beta/models?pageSize=1000&pageToken=tok%3D"},
		{"ollama", "http://localhost:11434", "", "http://localhost:11434/api/tags"},
		{"ollama", "http://host/api/", "", "http://host/api/tags"},
	} {
		if got := lister(t, tt.protocol).ModelsURL(tt.base, tt.page); got != tt.want {
			t.Errorf("%s %q %q: %s, want %s", tt.protocol, tt.base, tt.page, got, tt.want)
		}
	}
}

// The fixtures the specs cover match them.
func TestModelsFixturesMatchSpecs(t *testing.T) {
	t.Parallel()
	if err := providertest.ValidateSpec(t, providertest.SpecPath(t, "openai-openapi.yaml"), "ListModelsResponse", modelsFixture(t, "openai.json")); err != nil {
		t.Errorf("openai.json: %v", err)
	}
	if err := providertest.ValidateSpec(t, providertest.SpecPath(t, "ollama-openapi.yaml"), "ListResponse", modelsFixture(t, "ollama.json")); err != nil {
		t.Errorf("ollama.json: %v", err)
	}
}

// Any body: no panic, and every model listed has an ID.
func FuzzParseModels(f *testing.F) {
	for _, name := range []string{"openai.json", "openrouter.json", "anthropic-page1.json", "gemini-page1.json", "ollama.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "models", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"data":[{"id":"m","pricing":{"prompt":"1e-400","completion":"-0"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, protocol := range []string{"openai", "anthropic", "gemini", "ollama"} {
			models, _, err := lister(t, protocol).ParseModels(body)
			if err != nil {
				continue
			}
			for _, m := range models {
				if m.ID == "" || m.Name == "" {
					t.Fatalf("%s: a model without an ID or a name: %+v", protocol, m)
				}
			}
		}
	})
}
