package run

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/settings"
)

// A fifo where the window cache is kept (someone sharing the cache
// directory, or a file a program left) must not hang the run at its
// start: the cache is read without blocking, as a regular file only.
func TestWindowCacheFifoDoesNotHang(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/show":
			io.WriteString(w, `{"parameters":"num_ctx 2048"}`)
		case "/api/chat":
			io.WriteString(w, `{"model":"qwen3","message":{"role":"assistant","content":"hi"},"done":true,"prompt_eval_count":10,"eval_count":2}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cache := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cache, "ask"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(cache, "ask", "windows.json"), 0o600); err != nil {
		t.Skipf("no fifo here: %v", err)
	}
	e := testEnv(t, map[string]string{"XDG_CACHE_HOME": cache})
	flags := settings.Values{Provider: Given("ollama", "test"), Model: Given("qwen3", "test"), BaseURL: Given(srv.URL, "test"),
		NoStream: Given(true, "test"), NoTools: Given(true, "test")}
	s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: Settings{Values: flags}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		execute(t, s, e, "hello", func(*Result) {})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the run waited on a fifo planted as the window cache")
	}
}
