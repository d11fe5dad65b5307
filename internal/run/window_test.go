package run

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/settings"
)

// Without --context-window, a run on Ollama reads the window from
// /api/show (the Modelfile's num_ctx), keeps it in the cache directory for
// the next run, and names it in every request as options.num_ctx, so that
// Ollama never cuts a request silently; --context-window wins over it.
func TestOllamaWindowIsReadAndSent(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var shows int
	var chats [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/show":
			shows++
			if gjson.GetBytes(body, "model").String() != "qwen3" {
				http.Error(w, `{"error":"model not found"}`, http.StatusNotFound)
				return
			}
			io.WriteString(w, `{"parameters":"temperature 0.7\nnum_ctx 2048","model_info":{"qwen3.context_length":40960}}`)
		case "/api/chat":
			chats = append(chats, body)
			io.WriteString(w, `{"model":"qwen3","message":{"role":"assistant","content":"hi"},"done":true,"prompt_eval_count":10,"eval_count":2}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cache := t.TempDir()
	e := testEnv(t, map[string]string{"XDG_CACHE_HOME": cache})
	run := func(window int) []byte {
		flags := settings.Values{Provider: Given("ollama", "test"), Model: Given("qwen3", "test"), BaseURL: Given(srv.URL, "test"),
			NoStream: Given(true, "test"), NoTools: Given(true, "test")}
		if window > 0 {
			flags.ContextWindow = Given(window, "flag --context-window")
		}
		s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: Settings{Values: flags}})
		if err != nil {
			t.Fatal(err)
		}
		return execute(t, s, e, "hello", func(*Result) {})
	}
	first := run(0)
	second := run(0)
	run(9000)
	mu.Lock()
	defer mu.Unlock()
	if shows != 1 {
		t.Errorf("/api/show asked %d times, want once (then the cache)", shows)
	}
	for i, want := range []int64{2048, 2048, 9000} {
		if got := gjson.GetBytes(chats[i], "options.num_ctx"); got.Int() != want {
			t.Errorf("request %d: options.num_ctx = %s, want %d", i, got.Raw, want)
		}
	}
	for _, transcript := range [][]byte{first, second} {
		if !strings.Contains(string(transcript), `"context_window":2048`) {
			t.Errorf("run.started does not record the window:\n%.300s", transcript)
		}
	}
	if b, err := os.ReadFile(filepath.Join(cache, "ask", "windows.json")); err != nil || !strings.Contains(string(b), `"window":2048`) {
		t.Errorf("cache %s (%v)", b, err)
	}
}
