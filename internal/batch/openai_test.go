package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/openai"
	"github.com/ask-cli/ask/internal/providers/providertest"
	"github.com/ask-cli/ask/internal/run"
)

// TestRoundsSpec runs three real runs of two steps through Rounds against
// the fake Batch API: two batches, one a round, every input line and every
// batch creation valid by OpenAI's OpenAPI description.
func TestRoundsSpec(t *testing.T) {
	t.Parallel()
	spec := providertest.SpecPath(t, "openai-openapi.yaml")
	api := fakeprovider.StartBatchAPI(func(body []byte) fakeprovider.Reply {
		for _, m := range gjson.GetBytes(body, "messages").Array() {
			if m.Get("role").String() == "tool" {
				return fakeprovider.Reply{Text: "done"}
			}
		}
		return fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}}
	})
	defer api.Close()
	rounds, _ := Open("openai", api.URL, "fake-test-not-a-real-key-0000", (&openai.Protocol{}).Authorize, &http.Client{})
	rounds.Poll, rounds.Settle = 10*time.Millisecond, 20*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go rounds.Run(ctx)

	env := map[string]string{"ASK_PROVIDER": "openai", "ASK_BASE_URL": api.URL, "OPENAI_API_KEY": "fake-test-not-a-real-key-0000"}
	getenv := func(k string) string { return env[k] }
	var flags run.Settings
	flags.NoStream = run.Given(true, "test")
	flags.Yes = run.Given(true, "test")
	s, err := run.Resolve(run.Inputs{Flags: flags, Getenv: getenv, Wd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		rounds.Begin()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rounds.End()
			r, err := run.New(ctx, s, run.Env{Getenv: getenv, HTTP: &http.Client{Transport: rounds.Transport()}, Wd: t.TempDir(), Now: time.Now})
			if err != nil {
				t.Error(err)
				return
			}
			defer r.Close()
			res := r.Execute(ctx, "list it", run.Output{})
			if res.Status != "completed" || res.Answer != "done" || res.Steps != 2 {
				t.Errorf("run: %s %q after %d steps: %v", res.Status, res.Answer, res.Steps, res.Err)
			}
		}()
	}
	wg.Wait()
	api.Mu().Lock()
	defer api.Mu().Unlock()
	if len(api.Creates) != 2 {
		t.Errorf("%d batches, want 2 (one a round)", len(api.Creates))
	}
	for _, create := range api.Creates {
		if err := providertest.ValidateSpec(t, spec, "CreateBatchRequest", create); err != nil {
			t.Errorf("POST /batches %s: %v", create, err)
		}
	}
	lines := 0
	for _, up := range api.Uploads {
		sc := bufio.NewScanner(bytes.NewReader(up))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines++
			var line BatchLine
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Method != "POST" || line.URL != "/v1/chat/completions" {
				t.Errorf("input line %s: %v", sc.Bytes(), err)
				continue
			}
			if err := providertest.ValidateSpec(t, spec, "CreateChatCompletionRequest", line.Body); err != nil {
				t.Errorf("request %s: %v", line.Body, err)
			}
		}
	}
	if lines != 6 {
		t.Errorf("%d request lines, want 6", lines)
	}
}
