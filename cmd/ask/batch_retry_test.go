package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/batch"
	"github.com/ask-cli/ask/internal/fakeprovider"
)

// TestBatchRetryFailedSurvivesKill9 kills ask batch --retry-failed with
// SIGKILL at random moments, while it runs failed tasks again and when it
// rewrites the file: after every kill each task still has a line (none is
// lost), and a last run leaves one line a task, every one answered.
func TestBatchRetryFailedSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills up to 12 batches")
	}
	t.Parallel()
	bin, err := exec.LookPath("ask")
	if err != nil || !strings.Contains(bin, "testscript-main") {
		t.Fatalf("ask is not the test binary installed by TestMain: %q, %v", bin, err)
	}
	const tasks = 40
	m := startEcho(t, 20*time.Millisecond)
	file := taskFile(t, tasks)
	rng := rand.New(rand.NewPCG(2, uint64(time.Now().UnixNano())))
	for trial := range 4 {
		dir := t.TempDir()
		out := filepath.Join(dir, "results.jsonl")
		// Every task failed once: the file a run against a failing
		// provider left.
		var failed strings.Builder
		for i := range tasks {
			failed.Write(batch.Result{ID: fmt.Sprint("t", i), Status: batch.StatusError, ExitCode: 3, Error: "HTTP 500"}.Encode())
		}
		if err := os.WriteFile(out, []byte(failed.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		batchRun := func() *exec.Cmd {
			cmd := exec.Command(bin, "batch", "-j", "8", "--retry-failed", "--output", out, file)
			cmd.Env = append(os.Environ(), "ASK_PROVIDER=openai", "ASK_BASE_URL="+m.URL, "OPENAI_API_KEY=fake-test-not-a-real-key-0000",
				"HOME="+dir, "XDG_STATE_HOME="+dir)
			return cmd
		}
		for range 1 + rng.IntN(3) {
			cmd := batchRun()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			b, _ := os.ReadFile(out)
			have := map[string]bool{}
			for _, res := range readResults(t, string(b)) {
				have[res.ID] = true
			}
			for i := range tasks {
				if id := fmt.Sprint("t", i); !have[id] {
					t.Fatalf("trial %d: after a kill, %s has no line: a line was lost", trial, id)
				}
			}
		}
		if out, err := batchRun().CombinedOutput(); err != nil {
			t.Fatalf("trial %d: the last run: %v\n%s", trial, err, out)
		}
		b, _ := os.ReadFile(out)
		counts := map[string]int{}
		for _, res := range readResults(t, string(b)) {
			counts[res.ID]++
			if !res.Answered() {
				t.Errorf("trial %d: %s did not answer: %+v", trial, res.ID, res)
			}
		}
		for i := range tasks {
			if id := fmt.Sprint("t", i); counts[id] != 1 {
				t.Errorf("trial %d: %s has %d lines, want 1", trial, id, counts[id])
			}
		}
		if leftovers, _ := filepath.Glob(filepath.Join(dir, ".results.jsonl.*")); len(leftovers) > 0 {
			t.Errorf("trial %d: the last run left %v: a kill's new files are removed under the lock", trial, leftovers)
		}
	}
}

// TestBatchHostileBatchID: a provider's batch id is shown escaped on
// stderr, never raw: a batch interface that names its batch with an
// OSC 52 clipboard write and a bell cannot drive the terminal.
func TestBatchHostileBatchID(t *testing.T) {
	t.Parallel()
	const hostile = "batch_\x1b]52;c;cm0gLXJmIH4=\x07"
	fake := fakeprovider.StartBatchAPI(twoStepModel)
	t.Cleanup(fake.Close)
	// In front of the fake: its batch_1 is called hostile, both ways.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = strings.ReplaceAll(r.URL.Path, hostile, "batch_1")
		r.URL.RawPath = ""
		rec := httptest.NewRecorder()
		fake.Config.Handler.ServeHTTP(rec, r)
		quoted, _ := json.Marshal(hostile)
		body := strings.ReplaceAll(rec.Body.String(), `"batch_1"`, string(quoted))
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		io.WriteString(w, body)
	}))
	t.Cleanup(front.Close)
	env := map[string]string{"ASK_PROVIDER": "openai", "ASK_BASE_URL": front.URL, "OPENAI_API_KEY": "fake-test-not-a-real-key-0000",
		"XDG_STATE_HOME": t.TempDir()}
	r := runAsk(t, askEnv{stdin: `{"id":"t0","prompt":"p0"}` + "\n", env: env}, "batch", "--batch-api", "--no-wait", "--yes")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.ContainsAny(r.stderr, "\x1b\x07") {
		t.Errorf("stderr carries the batch id raw: %q", r.stderr)
	}
	if !strings.Contains(r.stderr, `batch_\u001b]52;c;cm0gLXJmIH4=\u0007`) {
		t.Errorf("stderr does not show the batch id escaped: %q", r.stderr)
	}
}
