package batch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadDone(t *testing.T) {
	t.Parallel()
	ok := `{"id":"a","status":"completed","exit_code":0}` + "\n"
	failed := `{"id":"b","status":"error","exit_code":3}` + "\n"
	noID := `{"id":"","line":4,"status":"invalid","exit_code":2}` + "\n"
	tests := []struct {
		name, file string
		keep       int
		ids        []string
		notDone    []string
		failed     int
		err        string
	}{
		{name: "empty", file: ""},
		// A pending line is not done; its final line after it is.
		{name: "pending", file: ok + `{"id":"p","status":"pending","exit_code":0}` + "\n", keep: len(ok) + 44, ids: []string{"a"}, notDone: []string{"p"}},
		{name: "pending then final", file: `{"id":"a","status":"pending","exit_code":0}` + "\n" + ok, keep: 44 + len(ok), ids: []string{"a"}},
		{name: "whole", file: ok + failed + noID, keep: len(ok + failed + noID), ids: []string{"a", "b"}, failed: 2},
		// A task run again (--retry-failed, a kill before the rewrite): its last line counts.
		{name: "an id twice", file: failed + ok + `{"id":"b","status":"completed","exit_code":0}` + "\n", keep: len(failed+ok) + len(`{"id":"b","status":"completed","exit_code":0}`+"\n"), ids: []string{"a", "b"}},
		// A huge line is refused, not read whole into memory.
		{name: "a huge line", file: ok + `{"id":"h","answer":"` + strings.Repeat("x", MaxLine) + "\"}\n" + ok, err: "line 2 is longer than 16 MiB"},
		{name: "torn last line", file: ok + `{"id":"c","sta`, keep: len(ok), ids: []string{"a"}},
		{name: "torn inside a rune", file: ok + "{\"id\":\"\xe2\x82", keep: len(ok), ids: []string{"a"}},
		{name: "zeros a crash left", file: ok + "\x00\x00\x00", keep: len(ok), ids: []string{"a"}},
		{name: "not ours", file: "hello\n" + ok, err: "line 1 is not a result line"},
		// A file of one line without its newline is someone's (a token
		// file), not a torn result: an error, and never cut.
		{name: "a token file", file: "sk-secret-token", err: "line 1 is not a result line"},
		{name: "a huge token file", file: strings.Repeat("x", MaxLine+10), err: "line 1 is longer than 16 MiB"},
		{name: "torn first line", file: `{"id":"a","sta`, keep: 0},
		{name: "zeros only", file: "\x00\x00", keep: 0},
		{name: "whole bad last line", file: ok + "hello\n", err: "line 2 is not a result line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			done, keep, err := ReadDone(strings.NewReader(tt.file))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if keep != int64(tt.keep) {
				t.Errorf("keep %d, want %d", keep, tt.keep)
			}
			for _, id := range tt.ids {
				if !done.HasID(id) {
					t.Errorf("%s not done", id)
				}
			}
			for _, id := range tt.notDone {
				if done.HasID(id) {
					t.Errorf("%s done", id)
				}
			}
			if done.Failed != tt.failed {
				t.Errorf("failed %d, want %d", done.Failed, tt.failed)
			}
		})
	}
}

func TestOpenOutputCutsTornLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.jsonl")
	whole := `{"id":"a","status":"completed","exit_code":0}` + "\n"
	os.WriteFile(path, []byte(whole+`{"id":"b"`), 0o644)
	out, err := OpenOutput(path, OutputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Sink().Write(Result{ID: "b", Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	out.Close()
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || lines[0]+"\n" != whole || !strings.HasPrefix(lines[1], `{"id":"b","run_id"`) {
		t.Errorf("file:\n%s", b)
	}
}

func TestShards(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 7, 16} {
		count := make([]int, n)
		for i := range 5000 {
			id := fmt.Sprint("task-", i)
			in := 0
			for s := range n {
				if (Shard{I: s, N: n}).Takes(id) {
					in++
					count[s]++
				}
			}
			if in != 1 {
				t.Fatalf("%s is in %d of %d shards", id, in, n)
			}
		}
		for s, c := range count {
			if c < 5000/n/2 {
				t.Errorf("shard %d/%d has %d of 5000: the hash is lopsided", s, n, c)
			}
		}
	}
	// The hash is FNV-1a, fixed: other machines agree.
	if !(Shard{I: int(uint64(0xcbf29ce484222325) % 5), N: 5}).Takes("") {
		t.Error("the shard of the empty id is not FNV-1a's")
	}
	for _, tt := range []struct {
		in   string
		want Shard
		err  bool
	}{{"0/4", Shard{0, 4}, false}, {" 3/4", Shard{3, 4}, false}, {"4/4", Shard{}, true}, {"-1/4", Shard{}, true}, {"1", Shard{}, true}, {"0/0", Shard{}, true}, {"x/2", Shard{}, true}} {
		got, err := ParseShard(tt.in, nil)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseShard(%q) = %v, %v", tt.in, got, err)
		}
	}
}

func TestLimiterHoldsEveryWaiter(t *testing.T) {
	t.Parallel()
	l := NewLimiter(8)
	l.Throttled(300 * time.Millisecond)
	if l.Allowed() != 4 {
		t.Errorf("allowed %d after a throttle, want 4", l.Allowed())
	}
	start := time.Now()
	var wg sync.WaitGroup
	var early atomic.Int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Wait(context.Background())
			if time.Since(start) < 250*time.Millisecond {
				early.Add(1)
			}
		}()
	}
	wg.Wait()
	if early.Load() > 0 {
		t.Errorf("%d waiters went before Retry-After", early.Load())
	}
	// Successes give the places back, one per run of successes.
	for range 100 {
		l.Succeeded()
	}
	if l.Allowed() != 8 {
		t.Errorf("allowed %d after successes, want 8", l.Allowed())
	}
	// Without Retry-After, the hold doubles while throttles go on.
	l.Throttled(0)
	l.Throttled(0)
	l.mu.Lock()
	hold := time.Until(l.until)
	l.mu.Unlock()
	if hold < 800*time.Millisecond || hold > 1100*time.Millisecond {
		t.Errorf("hold %v after two throttles, want about 1s", hold)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Wait(ctx); err == nil {
		t.Error("Wait ignored its context")
	}
}

// runTasks runs tasks through Run with exec, returning the results in order.
func runTasks(t *testing.T, cfg Config) (Summary, []Result, error) {
	t.Helper()
	var buf bytes.Buffer
	cfg.Sink = NewSink(&buf, nil)
	sum, err := Run(context.Background(), cfg)
	var out []Result
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		r, perr := ParseResultLine([]byte(l))
		if perr != nil {
			t.Fatal(perr)
		}
		out = append(out, r)
	}
	return sum, out, err
}

func TestRunBoundsWorkersAndSkipsDone(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	for i := range 100 {
		fmt.Fprintf(&in, `{"id":"t%d","prompt":"p"}`+"\n", i)
	}
	in.WriteString("oops\n")
	done, _, _ := ReadDone(strings.NewReader(`{"id":"t5","status":"completed","exit_code":0}` + "\n"))
	var now, peak atomic.Int32
	var ran sync.Map
	sum, results, err := runTasks(t, Config{Input: strings.NewReader(in.String()), J: 6, Done: done,
		Exec: func(ctx context.Context, task Task) Result {
			n := now.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(2 * time.Millisecond)
			now.Add(-1)
			if _, again := ran.LoadOrStore(task.ID, true); again {
				t.Errorf("%s ran twice", task.ID)
			}
			code := 0
			if task.ID == "t7" {
				code = 5
			}
			return Result{ID: task.ID, Status: "completed", ExitCode: code}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if peak.Load() > 6 || peak.Load() < 2 {
		t.Errorf("peak %d runs at once, want 2 to 6", peak.Load())
	}
	if _, ran5 := ran.Load("t5"); ran5 {
		t.Error("t5 had its result and ran again")
	}
	if len(results) != 100 || sum.Results != 100 || sum.Skipped != 1 || sum.Code != 5 {
		t.Errorf("%d results, summary %+v", len(results), sum)
	}
	if !containsLine(results, 101) {
		t.Errorf("no result for the bad line 101")
	}
}

func containsLine(rs []Result, line int) bool {
	for _, r := range rs {
		if r.Line == line && r.Status == StatusInvalid {
			return true
		}
	}
	return false
}

// TestRunInterruptedWritesNoResult: a run cut short by the batch's end is
// not a result, so that a rerun runs it again.
func TestRunInterruptedWritesNoResult(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var buf bytes.Buffer
	started := make(chan struct{}, 10)
	go func() {
		<-started
		cancel()
	}()
	_, err := Run(ctx, Config{Input: strings.NewReader(`{"id":"a","prompt":"p"}` + "\n" + `{"id":"b","prompt":"p"}` + "\n"), J: 2, Sink: NewSink(&buf, nil),
		Exec: func(ctx context.Context, task Task) Result {
			started <- struct{}{}
			<-ctx.Done()
			return Result{ID: task.ID, Status: "interrupted", ExitCode: 130}
		}})
	if err == nil {
		t.Error("no error from an interrupted batch")
	}
	if buf.Len() != 0 {
		t.Errorf("results of interrupted runs: %s", buf.String())
	}
}

func TestReadLineTooLong(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxLine+10)
	in := `{"id":"a","prompt":"p"}` + "\n" + long + "\n" + `{"id":"b","prompt":"p"}`
	_, results, err := runTasks(t, Config{Input: strings.NewReader(in), J: 1,
		Exec: func(_ context.Context, task Task) Result { return Result{ID: task.ID, Status: "completed"} }})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 || !containsLine(results, 2) {
		t.Errorf("results %+v", results)
	}
}

// TestSinkGroupCommit: lines written while a sync is under way share the
// next, and every line is whole and synced before Write returns.
func TestSinkGroupCommit(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var buf bytes.Buffer
	var syncs, durable atomic.Int64
	w := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	})
	var sink *Sink
	sink = NewSink(w, func() error {
		syncs.Add(1)
		time.Sleep(5 * time.Millisecond)
		sink.mu.Lock()
		durable.Store(sink.written)
		sink.mu.Unlock()
		return nil
	})
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := sink.Write(Result{ID: fmt.Sprint("t", i), Status: "completed"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if durable.Load() != 200 {
		t.Errorf("%d of 200 lines synced", durable.Load())
	}
	if n := syncs.Load(); n >= 200 {
		t.Errorf("%d syncs for 200 lines: no group commit", n)
	}
	done, keep, err := ReadDone(bytes.NewReader(buf.Bytes()))
	if err != nil || keep != int64(buf.Len()) || done.Count != 200 {
		t.Errorf("lines not whole: %v, %d of %d bytes, %d results", err, keep, buf.Len(), done.Count)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestLimiterRate: under --rate the workers share one pace: requests that
// come at once wait a gap each, in turn, and time left unused is not
// saved up for a burst.
func TestLimiterRate(t *testing.T) {
	t.Parallel()
	clock := time.Unix(1000, 0)
	l := NewLimiter(16)
	l.now = func() time.Time { return clock }
	if d := l.turn(); d != 0 {
		t.Fatalf("without --rate a request waits %v", d)
	}
	l.SetRate(100 * time.Millisecond)
	for i := range 5 {
		if d := l.turn(); d != time.Duration(i)*100*time.Millisecond {
			t.Errorf("request %d at once waits %v, want %v", i, d, time.Duration(i)*100*time.Millisecond)
		}
	}
	clock = clock.Add(10 * time.Second) // idle: no burst of 100 saved up
	for i := range 3 {
		if d := l.turn(); d != time.Duration(i)*100*time.Millisecond {
			t.Errorf("after a pause, request %d waits %v", i, d)
		}
	}
}

func TestParseRate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"10/s", 100 * time.Millisecond, ""},
		{"500/m", 120 * time.Millisecond, ""},
		{" 0.5 / s", 2 * time.Second, ""},
		{"10", 0, "give requests per second or minute"},
		{"10/h", 0, "give requests per second or minute"},
		{"x/s", 0, "give requests per second or minute"},
		{"0/s", 0, "more than 0"},
		{"-1/s", 0, "more than 0"},
		{"NaN/s", 0, "more than 0"},
		{"1e12/s", 0, "no bound"},
	} {
		got, err := ParseRate(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseRate(%q) = %v, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseShardAuto(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tt := range []struct {
		in     string
		getenv func(string) string
		want   Shard
		err    string
	}{
		{"auto/4", env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "1"), Shard{2, 4}, ""},
		{"auto/4", env("JOB_COMPLETION_INDEX", "3", "SLURM_ARRAY_TASK_ID", "1"), Shard{3, 4}, ""},
		{"auto/4", env("AWS_BATCH_JOB_ARRAY_INDEX", "0"), Shard{0, 4}, ""},
		{"auto/4", env("CLOUD_RUN_TASK_INDEX", "1"), Shard{1, 4}, ""},
		{"auto/4", env(), Shard{}, "no engine's index is set: auto reads JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID, AWS_BATCH_JOB_ARRAY_INDEX, CLOUD_RUN_TASK_INDEX"},
		{"auto/4", env("SLURM_ARRAY_TASK_ID", "4"), Shard{}, "SLURM_ARRAY_TASK_ID=4, but shards of 4 are numbered 0 to 3"},
		{"auto/4", env("SLURM_ARRAY_TASK_ID", "1-3"), Shard{}, `SLURM_ARRAY_TASK_ID="1-3" is not a whole number`},
		{"auto/x", env("SLURM_ARRAY_TASK_ID", "1"), Shard{}, "give I/N"},
		{"auto/0", env("SLURM_ARRAY_TASK_ID", "0"), Shard{}, "N must be at least 1"},
	} {
		got, err := ParseShard(tt.in, tt.getenv)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseShard(%q) = %v, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestTaskIDs: a task file's pin is its ids, whatever their order and
// whatever else its lines say; another id, one more or one less is
// another file.
func TestTaskIDs(t *testing.T) {
	t.Parallel()
	hash := func(s string) string {
		h, _, _, err := TaskIDs(strings.NewReader(s), Shard{})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := hash("{\"id\":\"a\",\"prompt\":\"p\"}\n{\"id\":\"b\",\"prompt\":\"p\",\"modle\":1}\n")
	for _, same := range []string{
		"{\"id\":\"b\",\"prompt\":\"q\",\"model\":\"m\"}\n{\"prompt\":\"p\",\"id\":\"a\"}\n", // mended, reordered
		"\xef\xbb\xbf{\"id\":\"a\",\"prompt\":\"p\"}\n\n{\"id\":\"b\",\"prompt\":\"p\",}\n",  // a byte order mark, a blank line, bad JSON after the id
	} {
		if got := hash(same); got != base {
			t.Errorf("%q: another pin", same)
		}
	}
	for _, other := range []string{
		"{\"id\":\"a\",\"prompt\":\"p\"}\n",
		"{\"id\":\"a\",\"prompt\":\"p\"}\n{\"id\":\"c\",\"prompt\":\"p\"}\n",
		"{\"id\":\"a\",\"prompt\":\"p\"}\n{\"id\":\"b\",\"prompt\":\"p\"}\n{\"id\":\"c\",\"prompt\":\"p\"}\n",
	} {
		if hash(other) == base {
			t.Errorf("%q: the same pin", other)
		}
	}
	// The tasks of a shard count its lines without an id, by their number.
	want := 2 // t1, t3
	if (Shard{I: 0, N: 2}).Takes("line 4") {
		want++
	}
	_, tasks, inShard, _ := TaskIDs(strings.NewReader("{\"id\":\"t1\"}\n{\"id\":\"t2\"}\n{\"id\":\"t3\"}\nnot json\n"), Shard{I: 0, N: 2})
	if tasks != 3 || inShard != want {
		t.Errorf("%d tasks, %d in shard 0/2; want 3, %d", tasks, inShard, want)
	}
}

// TestOpenOutputRefusesAHugeState: a FILE.state planted huge is refused
// with a clear error after reading at most a little of it.
func TestOpenOutputRefusesAHugeState(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.jsonl")
	f, err := os.Create(path + ".state")
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(100 << 20) // 100 MB, sparse
	f.Close()
	_, err = OpenOutput(path, OutputOptions{Pin: Pin{Tasks: "t.jsonl"}})
	if err == nil || !strings.Contains(err.Error(), "its state "+path+".state is not one ask batch reads (longer than 64 KiB)") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("the result file was created though its state was refused")
	}
}
