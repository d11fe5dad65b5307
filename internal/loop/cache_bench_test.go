package loop_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/prompts"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/anthropic"
	"github.com/ask-cli/ask/internal/tools"
)

// BenchmarkAnthropicCaching replays a 10-step Anthropic run whose tool
// results grow the conversation (nine read_file calls of about 1,500
// tokens each, then the answer), with ask's own system prompt and tools,
// against a fake Messages API that bills the prompt by Anthropic's
// documented cache rules (anthropicCache). It reports the input tokens a
// run is billed for, in base-rate equivalents, with the requests marked
// for caching (as ask sends them) and without marks (--no-cache), and the
// share saved. The usage is read back from the fake's replies by the
// protocol's own parser, as a real run reads it.
//
//	go test ./internal/loop -run '^$' -bench AnthropicCaching -benchtime 20x
func BenchmarkAnthropicCaching(b *testing.B) {
	var marked, unmarked float64
	for b.Loop() {
		marked = billedRun(b, true)
		unmarked = billedRun(b, false)
	}
	b.ReportMetric(marked, "billed-input-tokens/run")
	b.ReportMetric(unmarked, "uncached-input-tokens/run")
	b.ReportMetric(100*(1-marked/unmarked), "%saved")
}

// cachingSteps is how many requests the replayed run makes.
const cachingSteps = 10

// billedRun runs the loop once against a fresh cache and returns the
// billed-equivalent input tokens of its requests.
func billedRun(b *testing.B, mark bool) float64 {
	b.Helper()
	res := cachedRun(b, newAnthropicCache(cachingSteps, 1), mark)
	billed := 0.0
	steps := []string{fmt.Sprintf("marked %v: step input (read, written)", mark)}
	for _, s := range res.UsagePerStep {
		base := s.InputTokens - s.CacheReadTokens - s.CacheWriteTokens
		billed += float64(base) + 1.25*float64(s.CacheWriteTokens) + 0.1*float64(s.CacheReadTokens)
		steps = append(steps, fmt.Sprintf("%d: %d (%d, %d)", s.Step, s.InputTokens, s.CacheReadTokens, s.CacheWriteTokens))
	}
	b.Log(strings.Join(steps, "; "))
	if mark == (res.Usage.CacheReadTokens == 0) {
		b.Fatalf("marked %v, yet %d tokens were read from the cache", mark, res.Usage.CacheReadTokens)
	}
	return billed
}

// cachedRun runs the loop once against sim, with ask's system prompt and
// built-in tools, its requests marked for caching or not.
func cachedRun(tb testing.TB, sim *anthropicCache, mark bool) *loop.Result {
	tb.Helper()
	srv := httptest.NewServer(sim)
	defer srv.Close()
	caller := &providers.Caller{Provider: "anthropic", Protocol: anthropic.New(), BaseURL: srv.URL, Model: "claude-sonnet-4-5",
		HTTP: srv.Client(), Cache: providers.Cache{Mark: mark}}
	var decl []providers.Tool
	for _, t := range tools.Builtins(nil) {
		info := t.Info()
		decl = append(decl, providers.Tool{Name: info.Name, Description: info.Description, Parameters: info.Parameters})
	}
	res := loop.Run(context.Background(), loop.Config{
		Model: caller,
		System: prompts.System(prompts.Env{Date: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), OS: "linux",
			Workdir: "/src/app", Mode: "agent", Tools: true}, ""),
		Prompt:  "Read the files of internal/store one by one and tell me where the cache is invalidated.",
		Tools:   decl,
		Toolbox: sourceFiles{},
		// One step to spare, as in a run that answers before its limit:
		// the last step a limit allows ends the system prompt with a note
		// and sets tool_choice to none, and Anthropic caches neither
		// across that change.
		MaxSteps: sim.steps + 1,
	})
	if res.Status != loop.StatusCompleted || res.Steps != sim.steps {
		tb.Fatalf("run: %s after %d steps (%v)", res.Status, res.Steps, res.Err)
	}
	return res
}

// TestCacheReachesBackOverWideSteps: a step of twelve parallel calls adds
// 25 blocks to the conversation, more than Anthropic looks back from a
// breakpoint; the mark ask puts again on the previous request's last
// message still lets each request read everything the one before it sent.
func TestCacheReachesBackOverWideSteps(t *testing.T) {
	t.Parallel()
	res := cachedRun(t, newAnthropicCache(4, 12), true)
	for i, s := range res.UsagePerStep[1:] {
		prev := res.UsagePerStep[i]
		if prev.InputTokens >= cacheMinTokens && s.CacheReadTokens < prev.InputTokens {
			t.Errorf("step %d read %d tokens from the cache; step %d sent %d", s.Step, s.CacheReadTokens, prev.Step, prev.InputTokens)
		}
	}
	if res.Usage.CacheReadTokens == 0 {
		t.Error("nothing was read from the cache")
	}
}

// sourceFiles answers read_file with about 6 KB (1,500 tokens) of source
// text that differs from file to file.
type sourceFiles struct{}

func (sourceFiles) Call(_ context.Context, name, args string) (string, bool) {
	path := gjson.Get(args, "path").String()
	var sb strings.Builder
	for i := range 120 {
		fmt.Fprintf(&sb, "%4d\tfunc (s *Store) handle%d(ctx context.Context, key string) error { return s.%s(ctx, key) }\n", i+1, i, path)
	}
	return sb.String()[:6000], false
}

// anthropicCache is a fake Messages API that bills a request's prompt by
// Anthropic's documented prompt-caching rules:
//   - the prompt is read in the order tools, system, messages, one content
//     block at a time; a block marked with cache_control is a breakpoint;
//   - at each breakpoint, the prefix ending there is looked up, and so is
//     each shorter prefix ending at one of the 20 blocks before it; the
//     longest prefix found is read from the cache;
//   - the prefix up to each breakpoint past it is written to the cache,
//     when it is at least 1,024 tokens long (the minimum for Sonnet);
//   - what follows the last breakpoint is not cached.
//
// A token is four bytes of a block's JSON (its mark left out). Reads are
// billed at 0.1 of the base input rate, writes at 1.25. Each request
// is answered with calls of read_file for the next files, and the last
// with the answer; usage reports input_tokens without the cached tokens, as
// Anthropic does.
type anthropicCache struct {
	steps, calls int // the run's requests, and the calls of each but the last
	mu           sync.Mutex
	written      map[[32]byte]bool
	step         int
}

const (
	cacheLookback  = 20
	cacheMinTokens = 1024
)

func newAnthropicCache(steps, calls int) *anthropicCache {
	return &anthropicCache{steps: steps, calls: calls, written: map[[32]byte]bool{}}
}

func (c *anthropicCache) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	buf, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	in, read, write := c.bill(buf)
	c.step++
	content := `[{"type":"text","text":"Next file."}`
	for i := range c.calls {
		content += fmt.Sprintf(`,{"type":"tool_use","id":"toolu_%d_%d","name":"read_file","input":{"path":"file%d_%d.go"}}`, c.step, i, c.step, i)
	}
	content += "]"
	stop := "tool_use"
	if c.step >= c.steps {
		content, stop = `[{"type":"text","text":"The cache is invalidated in handle7."}]`, "end_turn"
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"msg_%d","type":"message","role":"assistant","content":%s,"stop_reason":%q,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":40}}`,
		c.step, content, stop, in-read-write, write, read)
}

// bill counts a request's prompt tokens, and those read from and written
// to the cache, and records what it writes.
func (c *anthropicCache) bill(req []byte) (total, read, write int) {
	type block struct {
		tokens int
		mark   bool
		prefix [32]byte // the hash of the prompt up to and including it
	}
	var blocks []block
	h := sha256.New()
	add := func(role string, raw string) {
		mark := gjson.Get(raw, "cache_control").Exists()
		if mark {
			raw, _ = sjson.Delete(raw, "cache_control")
		}
		h.Write([]byte(role))
		h.Write([]byte(raw))
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		blocks = append(blocks, block{tokens: max(1, len(raw)/4), mark: mark, prefix: sum})
	}
	doc := gjson.ParseBytes(req)
	doc.Get("tools").ForEach(func(_, t gjson.Result) bool { add("tool", t.Raw); return true })
	if s := doc.Get("system"); s.IsArray() {
		s.ForEach(func(_, blk gjson.Result) bool { add("system", blk.Raw); return true })
	} else if s.Exists() {
		add("system", `{"type":"text","text":`+s.Raw+`}`)
	}
	doc.Get("messages").ForEach(func(_, m gjson.Result) bool {
		role := m.Get("role").String()
		if content := m.Get("content"); content.IsArray() {
			content.ForEach(func(_, blk gjson.Result) bool { add(role, blk.Raw); return true })
		} else {
			add(role, `{"type":"text","text":`+content.Raw+`}`)
		}
		return true
	})

	upTo := make([]int, len(blocks)) // tokens up to and including block i
	for i, blk := range blocks {
		total += blk.tokens
		upTo[i] = total
	}
	hit := -1
	for i, blk := range blocks {
		if !blk.mark {
			continue
		}
		for j := i; j >= max(0, i-cacheLookback); j-- {
			if c.written[blocks[j].prefix] {
				hit = max(hit, j)
				break
			}
		}
	}
	if hit >= 0 {
		read = upTo[hit]
	}
	last := -1
	for i, blk := range blocks {
		if blk.mark && i > hit && upTo[i] >= cacheMinTokens {
			c.written[blk.prefix] = true
			last = i
		}
	}
	if last >= 0 {
		write = upTo[last] - read
	}
	return total, read, write
}
