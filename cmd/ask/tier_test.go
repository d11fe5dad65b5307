package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/runtest"
)

// TestTierErrors: --tier where the provider has no such tier, or a tier
// that does not exist, is a usage error (exit 2) naming the providers that
// have it, and nothing is sent.
func TestTierErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		config  string
		wantErr string
	}{
		{"flex on anthropic", []string{"-p", "anthropic", "--tier", "flex"}, "",
			"--tier flex (flag --tier): anthropic has no flex tier; the providers that do: openai, openai-responses"},
		{"background on chat completions", []string{"-p", "openai", "--tier", "background"}, "",
			"--tier background (flag --tier): openai has no background tier; the providers that do: openai-responses"},
		{"flex on gemini, from the config file", []string{"-p", "gemini"}, `{"tier": "flex"}`,
			"gemini has no flex tier; the providers that do: openai, openai-responses"},
		{"no such tier", []string{"-p", "openai", "--tier", "cheapest"}, "", "flex or background"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "never"})
			defer srv.Close()
			home := t.TempDir()
			if tt.config != "" {
				runtest.WriteConfig(t, home, tt.config)
			}
			env := map[string]string{"HOME": home, "ANTHROPIC_API_KEY": "fake-test-not-a-real-key-0000", "GEMINI_API_KEY": "fake-test-not-a-real-key-0000"}
			r := runAsk(t, askEnv{server: srv, env: env}, append(tt.args, "hi")...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit 2 with %q", r.code, r.stderr, tt.wantErr)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// listed is what one fake reply (100 input and 20 output tokens) costs at
// the test's prices, $1 and $10 per million.
const listed = (100*1.0 + 20*10.0) / 1e6

const pricesConfig = `{"prices": {"gpt-4o-mini": {"input": 1, "output": 10}, "gemini-2.5-flash": {"input": 1, "output": 10}}}`

// TestTierFlex: --tier flex sends service_tier "flex", and the run's cost
// from the config file's prices is at flex's rate, half the listed price,
// which --json says; without it the cost is the listed price.
func TestTierFlex(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args     []string
		tier     string
		cost     float64
		wantRate string
	}{
		{nil, "", listed, ""},
		{[]string{"--tier", "flex"}, "flex", listed / 2, "0.5"},
	} {
		srv := fakeprovider.Start(fakeprovider.Reply{Text: "ok"})
		defer srv.Close()
		home := t.TempDir()
		runtest.WriteConfig(t, home, pricesConfig)
		r := runAsk(t, askEnv{server: srv, env: map[string]string{"HOME": home}}, append(tt.args, "--json", "hi")...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, r.code, r.stderr)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 || gjson.GetBytes(reqs[0], "service_tier").String() != tt.tier {
			t.Errorf("%v: requests %q, want service_tier %q", tt.args, reqs, tt.tier)
		}
		out := gjson.Parse(r.stdout)
		if c := out.Get("cost").Float(); math.Abs(c-tt.cost) > 1e-12 {
			t.Errorf("%v: cost %v, want %v", tt.args, c, tt.cost)
		}
		if out.Get("tier").String() != tt.tier || out.Get("price_rate").Raw != tt.wantRate {
			t.Errorf("%v: tier %s, price_rate %s; want %q, %q", tt.args, out.Get("tier").Raw, out.Get("price_rate").Raw, tt.tier, tt.wantRate)
		}
	}
}

// TestBatchAPICostAtBatchRate: a task run through --batch-api costs half
// its tokens' listed price, and its run.finished in the history says it
// was billed as a batch; --tier with it is a usage error.
func TestBatchAPICostAtBatchRate(t *testing.T) {
	t.Parallel()
	g := fakeprovider.StartGeminiBatches(geminiTwoStep)
	t.Cleanup(g.Close)
	home := t.TempDir()
	runtest.WriteConfig(t, home, pricesConfig)
	env := map[string]string{"HOME": home, "ASK_PROVIDER": "gemini", "ASK_BASE_URL": g.URL + "/v1beta",
		"GEMINI_API_KEY": "fake-test-not-a-real-key-0000"}
	r := runAsk(t, askEnv{stdin: `{"id":"t0","prompt":"p0"}` + "\n", env: env}, "batch", "--batch-api", "--yes")
	results := readResults(t, r.stdout)
	if r.code != 0 || len(results) != 1 {
		t.Fatalf("exit %d, %d results; stderr:\n%s", r.code, len(results), r.stderr)
	}
	res := results[0]
	// Two steps, each 100 input and 20 output tokens, at half the price.
	if want := 2 * listed / 2; res.Cost == nil || math.Abs(*res.Cost-want) > 1e-12 {
		t.Errorf("cost %v, want %v", res.Cost, want)
	}
	transcript, err := os.ReadFile(filepath.Join(home, ".local", "state", "ask", "runs", res.RunID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var finished gjson.Result
	for _, line := range strings.Split(string(transcript), "\n") {
		if ev := gjson.Parse(line); ev.Get("type").String() == "run.finished" {
			finished = ev
		}
	}
	if finished.Get("tier").String() != "batch" || finished.Get("price_rate").Float() != 0.5 || finished.Get("cost").Float() != *res.Cost {
		t.Errorf("run.finished: %s", finished.Raw)
	}

	r = runAsk(t, askEnv{stdin: `{"id":"t1","prompt":"p1","tier":"flex"}` + "\n", env: env}, "batch", "--batch-api", "--yes")
	results = readResults(t, r.stdout)
	if len(results) != 1 || results[0].ExitCode != exitUsage || !strings.Contains(results[0].Error, "--tier") {
		t.Errorf("a task with a tier in a --batch-api batch: %s", r.stdout)
	}
}

// TestTierBackground: with -p openai-responses --tier background the run's
// request is queued in background mode (not streamed, stored), read again
// until it is done, and its answer is the run's.
func TestTierBackground(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var created []byte
	reads := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		status, output := "queued", `[]`
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/responses":
			created, _ = io.ReadAll(r.Body)
		case r.Method == http.MethodGet && r.URL.Path == "/responses/resp_q1":
			reads++
			status = "in_progress"
			if reads == 2 {
				status, output = "completed", `[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"done in the background","annotations":[]}]}]`
			}
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"message":"no route","type":"invalid_request_error"}}`)
			return
		}
		fmt.Fprintf(w, `{"id":"resp_q1","object":"response","created_at":1764230400,"status":%q,"background":true,"error":null,"model":"gpt-4o-mini","output":%s,"usage":{"input_tokens":100,"output_tokens":20,"total_tokens":120}}`, status, output)
	}))
	defer srv.Close()
	env := map[string]string{"HOME": t.TempDir(), "ASK_PROVIDER": "openai-responses", "ASK_BASE_URL": srv.URL, "OPENAI_API_KEY": "fake-test-not-a-real-key-0000"}
	r := runAsk(t, askEnv{env: env}, "--tier", "background", "--json", "hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	out := gjson.Parse(r.stdout)
	if out.Get("answer").String() != "done in the background" || out.Get("tier").String() != "background" {
		t.Errorf("answer %s, tier %s", out.Get("answer").Raw, out.Get("tier").Raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if reads != 2 || gjson.GetBytes(created, "background").Raw != "true" || gjson.GetBytes(created, "store").Raw != "true" || gjson.GetBytes(created, "stream").Exists() {
		t.Errorf("%d reads; created with %s", reads, created)
	}
}

// TestTierInBatch: --tier is a run setting like any other in ask batch:
// from the command line for every task, or as a task's key for its own.
func TestTierInBatch(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.StartFunc(func(body []byte) fakeprovider.Reply {
		return fakeprovider.Reply{Text: "tier " + gjson.GetBytes(body, "service_tier").String()}
	})
	defer srv.Close()
	tasks := `{"id":"a","prompt":"p"}` + "\n" + `{"id":"b","prompt":"p","tier":"flex"}` + "\n"
	for _, tt := range []struct {
		args []string
		want map[string]string
	}{
		{nil, map[string]string{"a": "tier ", "b": "tier flex"}},
		{[]string{"--tier", "flex"}, map[string]string{"a": "tier flex", "b": "tier flex"}},
	} {
		r := runAsk(t, askEnv{server: srv, stdin: tasks}, append([]string{"batch"}, tt.args...)...)
		results := readResults(t, r.stdout)
		if r.code != 0 || len(results) != 2 {
			t.Fatalf("%v: exit %d, %d results: %s", tt.args, r.code, len(results), r.stderr)
		}
		for _, res := range results {
			if res.Answer != tt.want[res.ID] {
				t.Errorf("%v: task %s answered %q, want %q", tt.args, res.ID, res.Answer, tt.want[res.ID])
			}
		}
	}
}
