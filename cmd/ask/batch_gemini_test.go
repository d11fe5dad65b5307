package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// geminiTwoStep is twoStepModel for GenerateContentRequests: it lists the
// directory, then, once a function response is in the conversation,
// answers "done: PROMPT".
func geminiTwoStep(request []byte) fakeprovider.Reply {
	prompt := ""
	for _, c := range gjson.GetBytes(request, "contents").Array() {
		for _, p := range c.Get("parts").Array() {
			if p.Get("functionResponse").Exists() {
				return fakeprovider.Reply{Text: "done: " + prompt}
			}
			if prompt == "" && c.Get("role").String() == "user" {
				prompt = p.Get("text").String()
			}
		}
	}
	return fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}}
}

// TestBatchAPIGemini: with --batch-api and -p gemini every step of every
// task goes through Gemini's Batch Mode as inline requests, one batch per
// round, each request with its model and its function declarations; the
// tools run locally between rounds. A request whose entry failed with a
// transient error, or whose batch expired, goes again in the next round;
// one that fails twice is its task's error.
func TestBatchAPIGemini(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fail   func(round int, key string) int
		expire func(round int) bool
		// want is each task's status, or how many have each; rounds the
		// batches created.
		want   map[string]string
		rounds int
	}{
		{name: "two steps, two rounds", want: map[string]string{"t0": "completed", "t1": "completed", "t2": "completed"}, rounds: 2},
		{name: "an entry unavailable once, retried", fail: func(round int, key string) int {
			if round == 1 && key == "0" {
				return 14 // UNAVAILABLE
			}
			return 0
		}, want: map[string]string{"t0": "completed", "t1": "completed", "t2": "completed"}, rounds: 3},
		{name: "the batch expired once, retried", expire: func(round int) bool { return round == 1 },
			want: map[string]string{"t0": "completed", "t1": "completed", "t2": "completed"}, rounds: 3},
		{name: "an entry failed twice, an error", fail: func(round int, key string) int {
			if round <= 2 && key == "0" {
				return 4 // DEADLINE_EXCEEDED
			}
			return 0
		}, want: map[string]string{"completed": "2", "error": "1"}},
		{name: "a bad request, no retry", fail: func(round int, key string) int {
			if round == 1 && key == "0" {
				return 3 // INVALID_ARGUMENT
			}
			return 0
		}, want: map[string]string{"completed": "2", "error": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := fakeprovider.StartGeminiBatches(geminiTwoStep)
			g.Fail, g.Expire = tt.fail, tt.expire
			t.Cleanup(g.Close)
			env := map[string]string{"ASK_PROVIDER": "gemini", "ASK_BASE_URL": g.URL + "/v1beta",
				"GEMINI_API_KEY": "fake-test-not-a-real-key-0000"}
			var tasks strings.Builder
			for i := range 3 {
				fmt.Fprintf(&tasks, `{"id":"t%d","prompt":"p%d"}`+"\n", i, i)
			}
			r := runAsk(t, askEnv{stdin: tasks.String(), env: env}, "batch", "--batch-api", "--yes")
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
				if fmt.Sprint(statuses["error"]) != n {
					t.Errorf("statuses %v, want %s error:\n%s", statuses, n, r.stdout)
				}
				if r.code == 0 {
					t.Errorf("exit 0 with a task's error")
				}
			} else if r.code != 0 {
				t.Errorf("exit %d; stderr:\n%s", r.code, r.stderr)
			}

			g.Mu().Lock()
			defer g.Mu().Unlock()
			if tt.rounds > 0 && len(g.Creates) != tt.rounds {
				t.Errorf("%d batches, want %d", len(g.Creates), tt.rounds)
			}
			if g.Direct != 0 {
				t.Errorf("%d model requests went around the batches", g.Direct)
			}
			for i, body := range g.Creates {
				if !strings.HasPrefix(g.Paths[i], "/v1beta/models/") || !strings.HasSuffix(g.Paths[i], ":batchGenerateContent") {
					t.Errorf("batch %d created at %s", i+1, g.Paths[i])
				}
				if got := g.Headers[i].Get("x-goog-api-key"); got != "fake-test-not-a-real-key-0000" {
					t.Errorf("batch %d: x-goog-api-key %q", i+1, got)
				}
				for _, q := range gjson.GetBytes(body, "batch.input_config.requests.requests").Array() {
					req := q.Get("request")
					if !strings.HasPrefix(req.Get("model").String(), "models/") {
						t.Errorf("batch %d: a request without its model: %s", i+1, req.Raw)
					}
					if !req.Get(`tools.#.functionDeclarations.#(name=="list_directory")`).Exists() {
						t.Errorf("batch %d: a request without the tools: %s", i+1, req.Raw)
					}
					if q.Get("metadata.key").String() == "" {
						t.Errorf("batch %d: a request without its key", i+1)
					}
				}
			}
		})
	}
}
