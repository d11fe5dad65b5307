package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
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
				writeConfig(t, home, tt.config)
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
		writeConfig(t, home, pricesConfig)
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
	writeConfig(t, home, pricesConfig)
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
