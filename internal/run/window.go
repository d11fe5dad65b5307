package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/ask-cli/ask/internal/noblock"
	"github.com/ask-cli/ask/internal/providers"
)

// The windows a provider told are kept this long in the cache directory,
// so that a run asks at most once a day per model.
const (
	windowCacheFile = "windows.json"
	windowCacheTTL  = 24 * time.Hour
	// windowWait bounds the question at the start of a run: a provider
	// slow to answer it leaves the window unknown (the run still
	// compacts on the provider's own "too long" answer).
	windowWait = 3 * time.Second
)

// cachedWindow is one model's window as its provider told it.
type cachedWindow struct {
	Window int       `json:"window"` // 0: the provider named none
	Read   time.Time `json:"read"`
}

// listedWindow is the model's input window as its provider tells it
// (catalog.Provider.ListsWindow), from the cache when it was read in the
// last day; 0 when the provider does not say or cannot be asked. A
// failure to ask is said on --verbose's notes, never a stop.
func (r *Run) listedWindow(ctx context.Context, c *providers.Caller) int {
	reader, ok := c.Protocol.(providers.WindowReader)
	if !ok || !r.Provider.ListsWindow {
		return 0
	}
	file := ""
	if dir := MCPCacheDir(r.env.Getenv); dir != "" {
		file = filepath.Join(dir, windowCacheFile)
	}
	key := r.Provider.Name + " " + providers.RedactURL(r.BaseURL) + " " + r.ModelName
	cache := map[string]cachedWindow{}
	if b, err := readCache(file); err == nil {
		json.Unmarshal(b, &cache) // a broken cache is asked again
	}
	now := r.env.Now()
	if w, ok := cache[key]; ok && now.Sub(w.Read) < windowCacheTTL && !w.Read.After(now) {
		return w.Window
	}
	window, err := askWindow(ctx, c, reader, r.BaseURL, r.ModelName)
	if err != nil {
		if r.env.Verbose && r.env.Notes != nil {
			fmt.Fprintf(r.env.Notes, "ask: %s did not say the window of %s (%v): it is unknown until the provider answers that a request is too long\n", r.Provider.Name, r.ModelName, err)
		}
		return 0
	}
	cache[key] = cachedWindow{Window: window, Read: now}
	if file != "" {
		if b, err := json.Marshal(cache); err == nil && os.MkdirAll(filepath.Dir(file), 0o700) == nil {
			writeFileAtomic(file, b)
		}
	}
	return window
}

func askWindow(ctx context.Context, c *providers.Caller, reader providers.WindowReader, baseURL, model string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, windowWait)
	defer cancel()
	method, url, body := reader.WindowRequest(baseURL, model)
	ask := *c
	ask.Retries = 0
	var resp *http.Response
	var err error
	if method == http.MethodPost {
		resp, err = ask.Post(ctx, url, body, providers.Hooks{})
	} else {
		resp, err = ask.Get(ctx, url, providers.Hooks{})
	}
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, providers.MaxResponseBytes))
	if err != nil {
		return 0, err
	}
	return reader.ParseWindow(answer, model)
}

// maxWindowCache bounds what is read of the window cache, which holds a
// few dozen bytes a model.
const maxWindowCache = 4 << 20

// readCache reads the window cache: a regular file, read without waiting
// (a fifo in its place must not hang the run's start) and bounded.
func readCache(file string) ([]byte, error) {
	f, info, err := noblock.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !info.Mode().IsRegular() || info.Size() > maxWindowCache {
		return nil, fmt.Errorf("%s is not a window cache ask wrote", file)
	}
	return io.ReadAll(io.LimitReader(f, maxWindowCache))
}

// writeFileAtomic writes b to file through a temporary file beside it, so
// that a run reading the cache meanwhile never sees half of it.
func writeFileAtomic(file string, b []byte) {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".windows-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return
	}
	if tmp.Close() == nil {
		os.Rename(tmp.Name(), file)
	}
}
