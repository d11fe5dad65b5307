package run

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/ask-cli/ask/internal/fakeprovider"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/settings"
)

// TestStepsKeepTheirPrefix runs three steps of a real run per protocol
// against recorded replies (two rounds of tool calls, then the answer) and
// checks that nothing defeats prefix caching: each request's bytes start
// with the previous request's, up to the end of its last message, and
// everything after the conversation (the tools, prompt_cache_key, the
// settings) is the same bytes. Providers that cache only what is marked
// match prefixes block by block, and a mark moves on with the
// conversation: their marks are taken out of the messages before the
// bytes are compared, and must be there. A second run of the same prompt
// sends the same first request, so a conversation carried on later finds
// its prefix too; the clock ticks a minute a call meanwhile.
func TestStepsKeepTheirPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		provider, model string
		conversation    string // the path of the conversation in a body
		replies         []string
		marked          bool
	}{
		{"openai", "gpt-4o", "messages", []string{"openai/testdata/openai-chat/fantasy-gpt4o-multi-tool.json", "openai/testdata/openai-chat/fantasy-gpt4o-multi-tool-turn2.json"}, false},
		{"openrouter", "anthropic/claude-sonnet-4", "messages", []string{"openai/testdata/openrouter/fantasy-anthropic-multi-tool.json", "openai/testdata/openrouter/fantasy-anthropic-multi-tool-turn2.json"}, true},
		{"openai-responses", "gpt-5", "input", []string{"responses/testdata/fantasy-gpt5-multi-tool.json", "responses/testdata/fantasy-gpt5-multi-tool-turn2.json"}, false},
		{"anthropic", "claude-sonnet-4-5", "messages", []string{"anthropic/testdata/fantasy-sonnet4-multi-tool.json", "anthropic/testdata/fantasy-sonnet4-multi-tool-turn2.json"}, true},
		{"gemini", "gemini-3-pro-preview", "contents", []string{"gemini/testdata/fantasy-3pro-multi-tool.json", "gemini/testdata/fantasy-3pro-multi-tool-turn2.json"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			t.Parallel()
			calls, answer := readFile(t, tt.replies[0]), readFile(t, tt.replies[1])
			first := stepRequests(t, tt.provider, tt.model, [][]byte{calls, calls, answer})
			if len(first) != 3 {
				t.Fatalf("%d requests, want 3", len(first))
			}
			for i := 1; i < len(first); i++ {
				prev, next := first[i-1], first[i]
				if tt.marked {
					prev, next = unmarkMessages(t, prev, tt.conversation), unmarkMessages(t, next, tt.conversation)
					if bytes.Equal(prev, first[i-1]) {
						t.Errorf("request %d carries no cache marks", i)
					}
				}
				samePrefix(t, i, prev, next, tt.conversation)
			}
			again := stepRequests(t, tt.provider, tt.model, [][]byte{answer})
			if !bytes.Equal(again[0], first[0]) {
				t.Errorf("a second run of the same prompt sends another first request:\n%s\n%s", first[0], again[0])
			}
		})
	}
}

// stepRequests runs the prompt against a server answering with replies in
// turn, and returns the request bodies it received.
func stepRequests(t *testing.T, provider, model string, replies [][]byte) [][]byte {
	t.Helper()
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fakeprovider.AboutModels(w, r) {
			return // OpenRouter's listing: no step
		}
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, b.Bytes())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(replies[min(n, len(replies)-1)])
	}))
	defer srv.Close()
	e := testEnv(t, map[string]string{"OPENAI_API_KEY": "k", "OPENROUTER_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "GEMINI_API_KEY": "k"})
	e.Wd = "/nonexistent-but-fixed" // the same directory in the system prompt of both runs
	var clock sync.Mutex
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	e.Now = func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		now = now.Add(time.Minute)
		return now
	}
	dir := t.TempDir()
	s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: dir, Flags: Settings{Values: settings.Values{
		Provider: Given(provider, "test"), Model: Given(model, "test"), BaseURL: Given(srv.URL, "test"),
		NoStream: Given(true, "test"), Workdir: Given(dir, "test"),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	e.Wd = dir
	execute(t, s, e, "add and multiply 2 and 3", func(res *Result) {
		if res.Status != loop.StatusCompleted {
			t.Fatalf("run: %s (%v)", res.Status, res.Err)
		}
	})
	mu.Lock()
	defer mu.Unlock()
	// The working directory differs between the runs; the prefix
	// compared is the rest.
	for i, b := range bodies {
		bodies[i] = bytes.ReplaceAll(b, []byte(dir), []byte("/work"))
	}
	return bodies
}

// samePrefix checks that next starts with prev up to the end of prev's
// last message, and that what follows the conversation is the same.
func samePrefix(t *testing.T, step int, prev, next []byte, conversation string) {
	t.Helper()
	p, n := gjson.GetBytes(prev, conversation), gjson.GetBytes(next, conversation)
	if !p.IsArray() || !n.IsArray() || p.Index == 0 || n.Index == 0 {
		t.Fatalf("request %d: no %s array found", step, conversation)
	}
	upToLast := prev[:p.Index+len(p.Raw)-1] // all but the array's closing bracket
	if !bytes.HasPrefix(next, upToLast) {
		at := 0
		for at < len(upToLast) && at < len(next) && upToLast[at] == next[at] {
			at++
		}
		t.Errorf("request %d does not start with request %d up to its last message; they part at byte %d:\n%s\n%s",
			step+1, step, at, upToLast[at:min(len(upToLast), at+120)], next[at:min(len(next), at+120)])
	}
	if a, b := prev[p.Index+len(p.Raw):], next[n.Index+len(n.Raw):]; !bytes.Equal(a, b) {
		t.Errorf("requests %d and %d differ after the conversation:\n%s\n%s", step, step+1, a, b)
	}
}

// unmarkMessages takes the cache marks out of a body's conversation.
func unmarkMessages(t *testing.T, body []byte, conversation string) []byte {
	t.Helper()
	var paths []string
	gjson.GetBytes(body, conversation).ForEach(func(i, m gjson.Result) bool {
		m.Get("content").ForEach(func(j, b gjson.Result) bool {
			if b.Get("cache_control").Exists() {
				paths = append(paths, conversation+"."+i.String()+".content."+j.String()+".cache_control")
			}
			return true
		})
		return true
	})
	out := body
	for _, p := range paths {
		var err error
		if out, err = sjson.DeleteBytes(out, p); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func readFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "providers", rel))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// --no-cache comes from the flag over the config file's no_cache over the
// default (caching on), and decides what the run's requests ask for: marks
// and a key where the catalog says the provider takes them, nothing with
// --no-cache; the key names the conversation by its first message.
func TestNoCacheSetting(t *testing.T) {
	t.Parallel()
	cfg := configFrom(t, "/c.json", `{"no_cache": true}`, "")
	tests := []struct {
		name      string
		flags     Settings
		cfg       *Config
		want      Setting[bool]
		mark, key bool
	}{
		{"default", Settings{Values: settings.Values{Provider: Given("anthropic", "test")}}, nil, Given(false, "default"), true, false},
		{"config", Settings{Values: settings.Values{Provider: Given("anthropic", "test")}}, cfg, Given(true, "config /c.json"), false, false},
		{"flag over config", Settings{Values: settings.Values{Provider: Given("anthropic", "test"), NoCache: Given(false, "flag --no-cache")}}, cfg, Given(false, "flag --no-cache"), true, false},
		{"openai takes a key", Settings{Values: settings.Values{Provider: Given("openai", "test")}}, nil, Given(false, "default"), false, true},
		{"openai with --no-cache", Settings{Values: settings.Values{Provider: Given("openai", "test"), NoCache: Given(true, "flag --no-cache")}}, nil, Given(true, "flag --no-cache"), false, false},
		{"openrouter, a Claude model", Settings{Values: settings.Values{Provider: Given("openrouter", "test"), Model: Given("anthropic/claude-sonnet-4.5", "test")}}, nil, Given(false, "default"), true, false},
		{"openrouter, a Gemini model", Settings{Values: settings.Values{Provider: Given("openrouter", "test"), Model: Given("google/gemini-2.5-pro", "test")}}, nil, Given(false, "default"), true, false},
		{"openrouter, an OpenAI model", Settings{Values: settings.Values{Provider: Given("openrouter", "test"), Model: Given("openai/gpt-4o-mini", "test")}}, nil, Given(false, "default"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := testEnv(t, map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "OPENROUTER_API_KEY": "k"})
			s, err := Resolve(Inputs{Getenv: e.Getenv, Config: tt.cfg, Wd: e.Wd, Flags: tt.flags})
			if err != nil {
				t.Fatal(err)
			}
			if s.NoCache != tt.want {
				t.Errorf("NoCache %+v, want %+v", s.NoCache, tt.want)
			}
			r, err := New(context.Background(), s, e)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			c := r.cache(json.RawMessage(`{"role":"user","content":"hi"}`))
			if c.Mark != tt.mark || (c.Key != "") != tt.key {
				t.Errorf("cache %+v, want mark %v and a key %v", c, tt.mark, tt.key)
			}
			if other := r.cache(json.RawMessage(`{"role":"user","content":"ho"}`)); tt.key && other.Key == c.Key {
				t.Errorf("two conversations share the key %s", c.Key)
			}
		})
	}
}
