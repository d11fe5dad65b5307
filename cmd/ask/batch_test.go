package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/batch"
	"github.com/ask-cli/ask/internal/fakeprovider"
)

// echoModel is a fake model for many runs at once: it answers each prompt
// "answer to PROMPT" after latency, counting the runs under way.
type echoModel struct {
	*fakeprovider.Server
	latency time.Duration
	mu      sync.Mutex
	arrived []time.Time // when each request came
	prompts map[string]int
	now     atomic.Int64
	peak    atomic.Int64
	// throttle, when set, answers a request 429 instead.
	throttle func(n int) (retryAfter string, ok bool)
}

func startEcho(t testing.TB, latency time.Duration) *echoModel {
	m := &echoModel{latency: latency, prompts: map[string]int{}}
	m.Server = fakeprovider.StartFunc(func(body []byte) fakeprovider.Reply {
		prompt := fakeprovider.FirstUserText(body)
		m.mu.Lock()
		n := len(m.arrived)
		m.arrived = append(m.arrived, time.Now())
		m.prompts[prompt]++
		throttle := m.throttle
		m.mu.Unlock()
		if throttle != nil {
			if ra, ok := throttle(n); ok {
				return fakeprovider.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {ra}},
					Body: `{"error":{"message":"rate limited","type":"rate_limit_error"}}`}
			}
		}
		cur := m.now.Add(1)
		for {
			p := m.peak.Load()
			if cur <= p || m.peak.CompareAndSwap(p, cur) {
				break
			}
		}
		time.Sleep(latency)
		m.now.Add(-1)
		return fakeprovider.Reply{Text: "answer to " + prompt}
	})
	t.Cleanup(m.Close)
	return m
}

// sent is how many requests carried prompt.
func (m *echoModel) sent(prompt string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.prompts[prompt]
}

// taskFile writes n tasks t0…t(n-1), prompts p0…, and returns its path.
func taskFile(t testing.TB, n int, extra ...string) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"t%d","prompt":"p%d","no-tools":true}`+"\n", i, i)
	}
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	path := filepath.Join(t.TempDir(), "tasks.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readResults reads result lines.
func readResults(t testing.TB, text string) []batch.Result {
	t.Helper()
	var out []batch.Result
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r batch.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("not a result line: %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

func TestBatchRunsEveryTask(t *testing.T) {
	t.Parallel()
	m := startEcho(t, 20*time.Millisecond)
	state := t.TempDir()
	r := runAsk(t, askEnv{server: m.Server, env: map[string]string{"XDG_STATE_HOME": state}}, "batch", "-j", "8", taskFile(t, 200))
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	results := readResults(t, r.stdout)
	if len(results) != 200 {
		t.Fatalf("%d results, want 200", len(results))
	}
	seen := map[string]bool{}
	for _, res := range results {
		if seen[res.ID] {
			t.Errorf("id %s twice", res.ID)
		}
		seen[res.ID] = true
		want := "answer to p" + strings.TrimPrefix(res.ID, "t")
		if res.Status != "completed" || res.ExitCode != 0 || res.Answer != want || res.Usage == nil || res.Usage.InputTokens != 100 {
			t.Errorf("result %+v, want completed with %q", res, want)
		}
		if _, err := os.Stat(filepath.Join(state, "ask", "runs", res.RunID+".jsonl")); err != nil {
			t.Errorf("run %s of %s not kept in the history: %v", res.RunID, res.ID, err)
		}
	}
	if p := m.peak.Load(); p > 8 || p < 2 {
		t.Errorf("%d requests at once at most, want 2 to 8", p)
	}
}
