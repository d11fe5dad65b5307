package providers_test

import (
	"net/http"
	"os"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
)

// OpenRouter's listing gives each model's window as context_length; a
// model it does not list, or a listing without the field, gives none.
func TestOpenAIModelsWindow(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile("testdata/models/openrouter.json")
	if err != nil {
		t.Fatal(err)
	}
	var m providers.OpenAIModels
	if method, url, b := m.WindowRequest("https://openrouter.ai/api/v1/", "x"); method != http.MethodGet || url != "https://openrouter.ai/api/v1/models" || b != nil {
		t.Errorf("request %s %s %s", method, url, b)
	}
	for model, want := range map[string]int{"some-lab/tiny-chat": 8192, "openai/gpt-4.1": 1047576, "no/such-model": 0} {
		if got, err := m.ParseWindow(body, model); err != nil || got != want {
			t.Errorf("%s: window %d (%v), want %d", model, got, err, want)
		}
	}
	plain, err := os.ReadFile("testdata/models/openai.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := m.ParseWindow(plain, "gpt-4o-mini"); err != nil || got != 0 {
		t.Errorf("OpenAI's listing: window %d (%v), want none", got, err)
	}
	if _, err := m.ParseWindow([]byte("<html>"), "x"); err == nil {
		t.Error("a listing that is not JSON read without error")
	}
}
