package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/batch"
	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// twoStepModel lists the directory, then answers "done: PROMPT".
func twoStepModel(body []byte) fakeprovider.Reply {
	prompt := fakeprovider.FirstUserText(body)
	for _, m := range gjson.GetBytes(body, "messages").Array() {
		if m.Get("role").String() == "tool" {
			return fakeprovider.Reply{Text: "done: " + prompt}
		}
	}
	return fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}}
}

// TestBatchAPIRounds: with --batch-api every step of every task goes
// through OpenAI's Batch API, one batch per round, the tools run locally
// between rounds; an expired entry goes again in the next round, and one
// expired twice is its task's error. (internal/batch's TestRoundsSpec
// validates the lines against OpenAI's OpenAPI description.)
func TestBatchAPIRounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		expire func(round int, id string) bool
		// want is each task's status; rounds the batches created.
		want   map[string]string
		rounds int
	}{
		{"two steps, two rounds", nil, map[string]string{"t0": "completed", "t1": "completed", "t2": "completed"}, 2},
		{"expired once, retried", func(round int, id string) bool { return round == 1 && id == "0" },
			map[string]string{"t0": "completed", "t1": "completed", "t2": "completed"}, 3},
		{"expired twice, an error", func(round int, id string) bool { return round <= 2 && id == "0" },
			map[string]string{"completed": "2", "error": "1"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := fakeprovider.StartBatchAPI(twoStepModel)
			api.Expire = tt.expire
			t.Cleanup(api.Close)
			var tasks strings.Builder
			for i := range 3 {
				fmt.Fprintf(&tasks, `{"id":"t%d","prompt":"p%d"}`+"\n", i, i)
			}
			r := runAsk(t, askEnv{stdin: tasks.String(), env: map[string]string{"ASK_PROVIDER": "openai", "ASK_BASE_URL": api.URL,
				"OPENAI_API_KEY": "fake-test-not-a-real-key-0000"}}, "batch", "--batch-api", "--yes")
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
			api.Mu().Lock()
			defer api.Mu().Unlock()
			if len(api.Creates) != tt.rounds && tt.want["error"] == "" {
				t.Errorf("%d batches, want %d", len(api.Creates), tt.rounds)
			}
			if api.Direct != 0 {
				t.Errorf("%d requests went to /chat/completions directly", api.Direct)
			}
			for _, p := range api.Purposes {
				if p != "batch" {
					t.Errorf("file uploaded with purpose %q", p)
				}
			}
			for _, up := range api.Uploads {
				sc := bufio.NewScanner(bytes.NewReader(up))
				for sc.Scan() {
					var line batch.BatchLine
					if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Method != "POST" || line.URL != "/v1/chat/completions" || line.CustomID == "" {
						t.Errorf("input line %s: %v", sc.Bytes(), err)
						continue
					}
					if gjson.GetBytes(line.Body, "stream").Bool() {
						t.Errorf("a streamed request in a batch: %s", line.Body)
					}
				}
			}
		})
	}
}

func TestBatchAPIOnlyOpenAI(t *testing.T) {
	t.Parallel()
	r := runAsk(t, askEnv{stdin: `{"id":"a","prompt":"p"}`, env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant-fake-not-a-real-key-0000"}}, "batch", "--batch-api", "-p", "anthropic")
	if r.code != 2 || !strings.Contains(r.stderr, "--batch-api: only OpenAI") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
