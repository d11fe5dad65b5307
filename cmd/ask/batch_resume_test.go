package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/records"
)

// resumeLine is the stderr line that says how to carry a pending batch on.
var resumeLine = regexp.MustCompile(`continue with: ask batch --resume (\S+)`)

// sentLines counts the model requests a fake batch interface received, in
// all its batches.
func (f batchFake) sentLines(t *testing.T) int {
	t.Helper()
	n := 0
	for _, b := range f.bodies() {
		if f.requests != "" {
			n += len(gjson.GetBytes(b, f.requests).Array())
			continue
		}
		n += bytes.Count(b, []byte("\n"))
	}
	return n
}

// TestBatchNoWaitResume: --no-wait leaves each round pending and --resume
// carries it on, against the three providers' fakes, with tasks of two steps
// that run a tool between the rounds: every task ends with its final line
// after its pending ones, each request went in a batch once (one expired
// request once more), the state is kept while the batch is in progress,
// and each run is one transcript in the history.
func TestBatchNoWaitResume(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openai", "anthropic", "gemini"} {
		for _, expire := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/expire=%v", provider, expire), func(t *testing.T) {
				t.Parallel()
				var exp func(round int, id string) bool
				if expire {
					exp = func(round int, id string) bool { return round == 1 && id == "1" }
				}
				fake := startBatchFake(t, provider, exp)
				state := t.TempDir()
				fake.env["XDG_STATE_HOME"] = state
				out := filepath.Join(t.TempDir(), "out.jsonl")
				var tasks strings.Builder
				for i := range 3 {
					fmt.Fprintf(&tasks, `{"id":"t%d","prompt":"p%d"}`+"\n", i, i)
				}
				e := askEnv{stdin: tasks.String(), env: fake.env}
				r := runAsk(t, e, "batch", "--batch-api", "--no-wait", "--yes", "--output", out)
				m := resumeLine.FindStringSubmatch(r.stderr)
				if r.code != 0 || m == nil {
					t.Fatalf("--no-wait: exit %d, want 0 and the line naming --resume; stderr:\n%s", r.code, r.stderr)
				}
				lines := readOutput(t, out)
				if len(lines) != 3 || lines[0].Status != "pending" {
					t.Fatalf("after --no-wait: %+v, want three pending lines", lines)
				}

				// The fake's batch is in progress at its first read: the
				// state stays, and the next --resume finds it.
				e.stdin = ""
				r = runAsk(t, e, "batch", "--resume", "--no-wait")
				if r.code != 0 || !strings.Contains(r.stderr, "still in progress") {
					t.Fatalf("--resume of a batch in progress: exit %d; stderr:\n%s", r.code, r.stderr)
				}
				// Ended now: the runs get their replies, run the tool, and
				// the next round is left pending in turn, under a new id.
				r = runAsk(t, e, "batch", "--resume", m[1], "--no-wait")
				m2 := resumeLine.FindStringSubmatch(r.stderr)
				if r.code != 0 || m2 == nil || m2[1] == m[1] {
					t.Fatalf("--resume --no-wait: exit %d, want a new pending batch; stderr:\n%s", r.code, r.stderr)
				}
				// And the last round is waited for.
				for range 3 {
					r = runAsk(t, e, "batch", "--resume")
					if r.code != 0 {
						t.Fatalf("--resume: exit %d; stderr:\n%s", r.code, r.stderr)
					}
					if !resumeLine.MatchString(r.stderr) {
						break
					}
				}
				final := map[string]int{}
				runs := map[string]string{}
				for _, l := range readOutput(t, out) {
					if prev, seen := runs[l.ID]; seen && prev != l.RunID {
						t.Errorf("%s: run %s, then %s: a resumed task goes on in its run", l.ID, prev, l.RunID)
					}
					runs[l.ID] = l.RunID
					if l.Status == "pending" {
						if final[l.ID] > 0 {
							t.Errorf("%s: a pending line after its final one", l.ID)
						}
						continue
					}
					final[l.ID]++
					if l.Status != "completed" || l.Answer != "done: p"+strings.TrimPrefix(l.ID, "t") {
						t.Errorf("%s: %s %q (%s)", l.ID, l.Status, l.Answer, l.Error)
					}
				}
				for i := range 3 {
					if id := fmt.Sprintf("t%d", i); final[id] != 1 {
						t.Errorf("%s has %d final lines, want 1", id, final[id])
					}
				}
				want := 6 // two steps a task, each sent once
				if expire {
					want = 7 // and the expired request once more
				}
				if n := fake.sentLines(t); n != want {
					t.Errorf("%d requests went in the batches, want %d", n, want)
				}
				if n := fake.direct(); n != 0 {
					t.Errorf("%d model requests went around the batches", n)
				}
				for id, runID := range runs {
					checkWholeRun(t, filepath.Join(state, "ask", "runs", runID+".jsonl"), id)
				}

				r = runAsk(t, e, "batch", "--resume")
				if r.code != 2 || !strings.Contains(r.stderr, "no pending batch") {
					t.Errorf("--resume with none pending: exit %d, stderr %q", r.code, r.stderr)
				}
			})
		}
	}
}

// checkWholeRun checks that a resumed run's kept transcript is one run:
// run.started once, each request answered once, run.finished completed
// last.
func checkWholeRun(t *testing.T, path, task string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v", task, err)
		return
	}
	events, err := records.Read(bytes.NewReader(data))
	if err != nil {
		t.Errorf("%s: %v", task, err)
		return
	}
	count := map[string]int{}
	for _, ev := range events {
		count[ev.Type]++
	}
	last := events[len(events)-1]
	if count[records.TypeRunStarted] != 1 || count[records.TypeRequest] != 2 || count[records.TypeResponse] != 2 ||
		count[records.TypeToolFinished] != 1 || last.Type != records.TypeRunFinished || last.Status != "completed" || last.Steps != 2 {
		t.Errorf("%s: the transcript holds %v and ends %s %s after %d steps", task, count, last.Type, last.Status, last.Steps)
	}
}

// TestBatchPendingRerun: a pending line does not make a plain rerun skip
// its task, and a --resume after that rerun adds no second final line.
func TestBatchPendingRerun(t *testing.T) {
	t.Parallel()
	fake := startBatchFake(t, "openai", nil)
	fake.env["XDG_STATE_HOME"] = t.TempDir()
	out := filepath.Join(t.TempDir(), "out.jsonl")
	tasks := `{"id":"a","prompt":"pa"}` + "\n" + `{"id":"b","prompt":"pb"}` + "\n"
	e := askEnv{stdin: tasks, env: fake.env}
	if r := runAsk(t, e, "batch", "--batch-api", "--no-wait", "--yes", "--output", out); r.code != 0 || !resumeLine.MatchString(r.stderr) {
		t.Fatalf("--no-wait: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if r := runAsk(t, e, "batch", "--batch-api", "--yes", "--output", out); r.code != 0 {
		t.Fatalf("rerun: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	e.stdin = ""
	if r := runAsk(t, e, "batch", "--resume"); r.code != 0 {
		t.Fatalf("--resume: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	final := map[string]int{}
	for _, l := range readOutput(t, out) {
		if l.Status != "pending" {
			final[l.ID]++
		}
	}
	if final["a"] != 1 || final["b"] != 1 {
		t.Errorf("final lines %v, want one for a and one for b", final)
	}
	if n := fake.sentLines(t); n != 2+4 {
		t.Errorf("%d requests went in the batches, want 6: the first round's 2, the rerun's 4, none on --resume", n)
	}
}

// TestBatchNoWaitNeedsBatchAPI: --no-wait alone is a usage error.
func TestBatchNoWaitNeedsBatchAPI(t *testing.T) {
	t.Parallel()
	r := runAsk(t, askEnv{stdin: `{"id":"a","prompt":"p"}`}, "batch", "--no-wait")
	if r.code != 2 || !strings.Contains(r.stderr, "give --batch-api") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func readOutput(t *testing.T, path string) []resultLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []resultLine
	for _, r := range readResults(t, string(data)) {
		out = append(out, resultLine{ID: r.ID, RunID: r.RunID, Status: r.Status, Answer: r.Answer, Error: r.Error})
	}
	return out
}

type resultLine struct{ ID, RunID, Status, Answer, Error string }

// TestBatchResumeStartsTheRest: the tasks not started when a round was
// left pending (-j 1 holds one task in it) start on --resume, and the
// pending lines go to stdout when there is no --output.
func TestBatchResumeStartsTheRest(t *testing.T) {
	t.Parallel()
	fake := startBatchFake(t, "anthropic", nil)
	fake.env["XDG_STATE_HOME"] = t.TempDir()
	var tasks strings.Builder
	for i := range 3 {
		fmt.Fprintf(&tasks, `{"id":"t%d","prompt":"p%d"}`+"\n", i, i)
	}
	r := runAsk(t, askEnv{stdin: tasks.String(), env: fake.env}, "batch", "--batch-api", "--no-wait", "--yes", "-j", "1")
	lines := readResults(t, r.stdout)
	if r.code != 0 || len(lines) != 1 || lines[0].Status != "pending" || !strings.Contains(r.stderr, "pending with 1 request;") {
		t.Fatalf("-j 1 --no-wait: exit %d, results %+v; stderr:\n%s", r.code, lines, r.stderr)
	}
	r = runAsk(t, askEnv{env: fake.env}, "batch", "--resume", "-j", "4")
	got := map[string]string{}
	for _, l := range readResults(t, r.stdout) {
		got[l.ID] = l.Status + " " + l.Answer
	}
	for i := range 3 {
		if id := fmt.Sprintf("t%d", i); got[id] != "completed done: p"+strings.TrimPrefix(id, "t") {
			t.Errorf("%s: %q", id, got[id])
		}
	}
	if r.code != 0 || len(got) != 3 {
		t.Errorf("--resume: exit %d, %v; stderr:\n%s", r.code, got, r.stderr)
	}
	if n := fake.sentLines(t); n != 6 {
		t.Errorf("%d requests went in the batches, want 6", n)
	}
}

// TestBatchResumeExpiredTwice: a request left unanswered by the round it
// was left pending in goes again in the next, once; unanswered there too,
// it is its task's error (exit 3), carried through the kept state.
func TestBatchResumeExpiredTwice(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			fake := startBatchFake(t, provider, func(round int, _ string) bool { return round <= 2 })
			fake.env["XDG_STATE_HOME"] = t.TempDir()
			e := askEnv{stdin: `{"id":"a","prompt":"pa"}` + "\n", env: fake.env}
			if r := runAsk(t, e, "batch", "--batch-api", "--no-wait", "--yes"); r.code != 0 {
				t.Fatalf("--no-wait: exit %d; stderr:\n%s", r.code, r.stderr)
			}
			e.stdin = ""
			var r askResult
			for range 4 { // in progress, then expired and sent again, then in progress
				r = runAsk(t, e, "batch", "--resume", "--no-wait")
				if r.code != 0 || !strings.Contains(r.stderr, "still in progress") && !resumeLine.MatchString(r.stderr) {
					break
				}
			}
			lines := readResults(t, r.stdout)
			if r.code != 3 || len(lines) != 1 || lines[0].Status != "error" || !strings.Contains(lines[0].Error, "unanswered twice") {
				t.Fatalf("exit %d, results %+v; stderr:\n%s", r.code, lines, r.stderr)
			}
			if n := fake.sentLines(t); n != 2 {
				t.Errorf("%d requests went in the batches, want 2", n)
			}
		})
	}
}
