package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// twoStepModel lists the directory, then answers "done: PROMPT"; it reads
// Chat Completions and Anthropic Messages requests alike.
func twoStepModel(body []byte) fakeprovider.Reply {
	prompt := fakeprovider.FirstUserText(body)
	for _, m := range gjson.GetBytes(body, "messages").Array() {
		if m.Get("role").String() == "tool" || strings.Contains(m.Get("content").Raw, `"tool_result"`) {
			return fakeprovider.Reply{Text: "done: " + prompt}
		}
	}
	return fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}}
}

// batchFake is a provider's fake batch interface, as the test reads it.
type batchFake struct {
	url     string
	env     map[string]string
	creates func() int
	direct  func() int
}

func startBatchFake(t *testing.T, provider string, expire func(round int, id string) bool) batchFake {
	if provider == "anthropic" {
		m := fakeprovider.StartMessageBatches(twoStepModel)
		m.Expire = expire
		t.Cleanup(m.Close)
		locked := func(f func() int) func() int {
			return func() int { m.Mu().Lock(); defer m.Mu().Unlock(); return f() }
		}
		return batchFake{url: m.URL, env: map[string]string{"ASK_PROVIDER": "anthropic", "ASK_BASE_URL": m.URL + "/v1",
			"ANTHROPIC_API_KEY": "fake-test-not-a-real-key-0000"},
			creates: locked(func() int { return len(m.Creates) }), direct: locked(func() int { return m.Direct })}
	}
	api := fakeprovider.StartBatchAPI(twoStepModel)
	api.Expire = expire
	t.Cleanup(api.Close)
	locked := func(f func() int) func() int {
		return func() int { api.Mu().Lock(); defer api.Mu().Unlock(); return f() }
	}
	return batchFake{url: api.URL, env: map[string]string{"ASK_PROVIDER": "openai", "ASK_BASE_URL": api.URL,
		"OPENAI_API_KEY": "fake-test-not-a-real-key-0000"},
		creates: locked(func() int { return len(api.Creates) }), direct: locked(func() int { return api.Direct })}
}

// TestBatchAPIRounds: with --batch-api every step of every task goes
// through OpenAI's Batch API, one batch per round, the tools run locally
// between rounds; an expired entry goes again in the next round, and one
// expired twice is its task's error. (internal/batch's TestRoundsSpec
// validates the lines against OpenAI's OpenAPI description.)
func TestBatchAPIRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: each case waits out the Batch API poll (3 to 5 s); internal/batch TestRoundsSpec covers the rounds")
	}
	t.Parallel()
	tests := []struct {
		name   string
		expire func(round int, id string) bool
		// want is each task's status, or how many have each; rounds the
		// batches created.
		want   map[string]string
		rounds int
	}{
		{"two steps, two rounds", nil, map[string]string{"t0": "completed", "t1": "completed", "t2": "completed"}, 2},
		{"expired once, retried", func(round int, id string) bool { return round == 1 && id == "0" },
			map[string]string{"t0": "completed", "t1": "completed", "t2": "completed"}, 3},
		{"expired twice, an error", func(round int, id string) bool { return round <= 2 && id == "0" },
			map[string]string{"completed": "2", "error": "1"}, 0},
	}
	for _, provider := range []string{"openai", "anthropic"} {
		for _, tt := range tests {
			t.Run(provider+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				fake := startBatchFake(t, provider, tt.expire)
				var tasks strings.Builder
				for i := range 3 {
					fmt.Fprintf(&tasks, `{"id":"t%d","prompt":"p%d"}`+"\n", i, i)
				}
				r := runAsk(t, askEnv{stdin: tasks.String(), env: fake.env}, "batch", "--batch-api", "--yes")
				results := readResults(t, r.stdout)
				if len(results) != 3 {
					t.Fatalf("%d results; exit %d, stderr:\n%s", len(results), r.code, r.stderr)
				}
				statuses := map[string]int{}
				for _, res := range results {
					statuses[res.Status]++
					if want, named := tt.want[res.ID]; named {
						if res.Status != want || res.Answer != "done: p"+strings.TrimPrefix(res.ID, "t") {
							t.Errorf("%s: %s %q (%s), want %s", res.ID, res.Status, res.Answer, res.Error, want)
						}
					}
				}
				if n, ok := tt.want["error"]; ok {
					if fmt.Sprint(statuses["error"]) != n || !strings.Contains(r.stdout, "unanswered twice") {
						t.Errorf("statuses %v, want one error naming the twice-expired request:\n%s", statuses, r.stdout)
					}
					if r.code != 3 {
						t.Errorf("exit %d, want 3 (a provider error)", r.code)
					}
				} else if r.code != 0 {
					t.Errorf("exit %d; stderr:\n%s", r.code, r.stderr)
				}
				if n := fake.creates(); tt.rounds > 0 && n != tt.rounds {
					t.Errorf("%d batches, want %d", n, tt.rounds)
				}
				if n := fake.direct(); n != 0 {
					t.Errorf("%d model requests went around the batches", n)
				}
			})
		}
	}
}

func TestBatchAPINeedsABatchInterface(t *testing.T) {
	t.Parallel()
	r := runAsk(t, askEnv{stdin: `{"id":"a","prompt":"p"}`, env: map[string]string{"DEEPSEEK_API_KEY": "fake-test-not-a-real-key-0000"}}, "batch", "--batch-api", "-p", "deepseek")
	if r.code != 2 || !strings.Contains(r.stderr, "--batch-api: the provider deepseek has no batch interface") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
