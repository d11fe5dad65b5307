package run

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/runtest"
)

// TestUsagePerStep checks the per-step usage in run.finished.
func TestUsagePerStep(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "read_file", `{"path":"a.txt"}`)}},
		fakeprovider.Reply{Text: "alpha"})
	defer srv.Close()
	w := newWorld(t, srv)
	os.WriteFile(filepath.Join(w.wd, "a.txt"), []byte("alpha\n"), 0o644)
	finished := w.ask("q").finished()
	if finished.Get("type").String() != "run.finished" {
		t.Fatalf("last event %s", finished.Raw)
	}
	steps := finished.Get("usage_per_step").Array()
	if len(steps) != 2 || steps[0].Get("step").Int() != 1 || steps[1].Get("step").Int() != 2 ||
		steps[1].Get("input_tokens").Int() != 100 || steps[1].Get("output_tokens").Int() != 20 || steps[1].Get("total_tokens").Int() != 120 {
		t.Errorf("usage_per_step = %s", finished.Get("usage_per_step").Raw)
	}
	if finished.Get("usage.total_tokens").Int() != 240 {
		t.Errorf("usage = %s", finished.Get("usage").Raw)
	}
}

// faultCase is one thing a real network or a real model does to a run: the
// run must end with the documented exit code, one line on stderr saying
// what happened, and a transcript holding every event up to the fault.
type faultCase struct {
	name  string
	steps []http.Handler
	flags []any
	// setup runs in the work directory before ask does.
	setup func(t *testing.T, wd string)

	wantCode   int
	wantOut    string // exact stdout, when set
	wantErr    string // substring of the last stderr line ("" when it must be empty)
	wantEvents []string
	wantCalls  int // requests the server must have seen
	maxTime    time.Duration
	// check looks further at the transcript and the work directory.
	check func(t *testing.T, evs []records.Event, wd string)
}

// TestFaults is not parallel: it weighs each run by the process's
// allocations, which other tests would add to.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it waits out retries and idle streams")
	}
	slowDown := fakeprovider.Reply{Status: 429, Header: http.Header{"Retry-After-Ms": {"20"}},
		Body: `{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"requests","code":"rate_limit_exceeded"}}`}
	htmlError := fakeprovider.HTMLPage(500, "500 Internal Server Error")
	htmlError.Header = http.Header{"Retry-After-Ms": {"10"}}
	stream := fakeprovider.ChatStream(fakeprovider.Reply{Text: "an answer long enough to be cut in the middle"})
	firstEvents := stream[:len(stream)/2]
	firstEvents = firstEvents[:strings.LastIndex(string(firstEvents), "\n\n")+2]
	whole := fakeprovider.ChatJSON(fakeprovider.Reply{Text: "never seen"})
	unicode := "naïve café — 日本語, ελληνικά, emoji 🎉🚀"

	tests := []faultCase{
		{
			name:     "429 then success",
			steps:    []http.Handler{fakeprovider.Serve(slowDown), fakeprovider.Serve(fakeprovider.Reply{Text: "fine"})},
			wantCode: 0, wantOut: "fine\n",
			wantErr:    "/chat/completions (requests): Rate limit reached for gpt-4o-mini",
			wantEvents: []string{"run.started", "request", "response 429", "retry 1", "request", "response 200", "assistant", "run.finished completed 0"},
			wantCalls:  2,
		},
		{
			name:       "500 with an HTML body after the last retry",
			steps:      []http.Handler{fakeprovider.Serve(htmlError)},
			flags:      []any{"retries", 1},
			wantCode:   3,
			wantErr:    "/chat/completions: HTML page: 500 Internal Server Error",
			wantEvents: []string{"run.started", "request", "response 500", "retry 1", "request", "response 500", "error", "run.finished error 3"},
			wantCalls:  2,
		},
		{
			name:       "connection reset mid-stream is reported, not retried",
			steps:      []http.Handler{fakeprovider.StreamThenReset(firstEvents), fakeprovider.Serve(fakeprovider.Reply{Text: "a retry"})},
			wantCode:   3,
			wantErr:    "ask: openai: read response: read stream: connection lost before the response was complete",
			wantEvents: []string{"run.started", "request", "response 200", "error", "run.finished error 3"},
			wantCalls:  1,
			check: func(t *testing.T, evs []records.Event, _ string) {
				if body := string(records.BodyBytes(evs[2].Body)); body != string(firstEvents) {
					t.Errorf("the response event holds %q, want the part that arrived: %q", body, firstEvents)
				}
			},
		},
		{
			name:       "a server that accepts and never answers meets --timeout",
			steps:      []http.Handler{fakeprovider.Hang()},
			flags:      []any{"timeout", "700ms"},
			wantCode:   124,
			wantErr:    "ask: stopped: --timeout 700ms reached",
			wantEvents: []string{"run.started", "request", "error", "run.finished timeout 124"},
			wantCalls:  1,
			maxTime:    5 * time.Second,
		},
		{
			name:       "a stream that goes silent meets the idle timeout",
			steps:      []http.Handler{fakeprovider.StreamThenStall(firstEvents)},
			wantCode:   3,
			wantErr:    "ask: openai: read response: read stream: no data from the provider within the idle timeout (300ms)",
			wantEvents: []string{"run.started", "request", "response 200", "error", "run.finished error 3"},
			wantCalls:  1,
			maxTime:    5 * time.Second,
		},
		{
			name:       "truncated JSON",
			steps:      []http.Handler{fakeprovider.Serve(fakeprovider.Reply{Body: string(whole[:len(whole)/2])})},
			flags:      []any{"no-stream", true},
			wantCode:   3,
			wantErr:    "ask: openai: read response: malformed response",
			wantEvents: []string{"run.started", "request", "response 200", "error", "run.finished error 3"},
			wantCalls:  1,
		},
		{
			name: "truncated JSON inside a stream",
			steps: []http.Handler{fakeprovider.Serve(fakeprovider.Reply{
				Body: "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hel\n\ndata: [DONE]\n\n"})},
			wantCode:   3,
			wantErr:    "ask: openai: read response: malformed response",
			wantEvents: []string{"run.started", "request", "response 200", "error", "run.finished error 3"},
			wantCalls:  1,
		},
		{
			name: "a UTF-8 character split across chunks arrives intact",
			steps: []http.Handler{fakeprovider.Trickle(fakeprovider.ChatStream(fakeprovider.Reply{Text: unicode}),
				"text/event-stream", time.Millisecond)},
			wantCode: 0, wantOut: unicode + "\n",
			wantEvents: []string{"run.started", "request", "response 200", "assistant", "run.finished completed 0"},
			wantCalls:  1,
			check: func(t *testing.T, evs []records.Event, _ string) {
				if evs[3].Text != unicode {
					t.Errorf("assistant text %q, want %q", evs[3].Text, unicode)
				}
			},
		},
		{
			name: "a tool that hangs meets --timeout and is killed",
			steps: []http.Handler{
				fakeprovider.Serve(fakeprovider.Reply{Calls: []providers.ToolCall{
					fakeprovider.Call("c1", "shell", `{"command":"echo $$ > sleeper.pid; exec sleep 30"}`)}}),
				fakeprovider.Serve(fakeprovider.Reply{Text: "not reached"}),
			},
			flags:    []any{"yes", true, "timeout", "1s"},
			wantCode: 124,
			wantErr:  "ask: stopped: --timeout 1s reached",
			// The pid file the command wrote is a change of the run's.
			wantEvents: []string{"run.started", "request", "response 200", "assistant", "tool.started shell",
				"file.changed", "tool.finished shell error", "error", "run.finished timeout 124"},
			wantCalls: 1,
			maxTime:   6 * time.Second,
			check: func(t *testing.T, evs []records.Event, wd string) {
				if !strings.Contains(evs[6].Content, "command killed: the run was cancelled") {
					t.Errorf("tool.finished says %q", evs[5].Content)
				}
				runtest.AssertGone(t, filepath.Join(wd, "sleeper.pid"))
			},
		},
		{
			name: "a tool that prints 100 MB",
			steps: []http.Handler{
				fakeprovider.Serve(fakeprovider.Reply{Calls: []providers.ToolCall{
					fakeprovider.Call("c1", "shell", `{"command":"yes 0123456789abcdef | head -c 100000000; echo; echo the end"}`)}}),
				fakeprovider.Serve(fakeprovider.Reply{Text: "lots of hex"}),
			},
			flags:    []any{"yes", true},
			wantCode: 0, wantOut: "lots of hex\n",
			wantEvents: []string{"run.started", "request", "response 200", "assistant", "tool.started shell",
				"tool.finished shell", "request", "response 200", "assistant", "run.finished completed 0"},
			wantCalls: 2,
			check: func(t *testing.T, evs []records.Event, _ string) {
				content := evs[5].Content
				if len(content) > 100<<10 || !strings.Contains(content, "bytes dropped; 100000009 bytes in all") ||
					!strings.Contains(content, "\nthe end\nstderr: (empty)") {
					t.Errorf("tool result (%d bytes) is not capped with head and tail:\n%s", len(content), content[10<<10-100:10<<10+300])
				}
				if n := len(evs[6].Body); n > 200<<10 {
					t.Errorf("the follow-up request is %d bytes", n)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runFault(t, tt) })
	}
}

func runFault(t *testing.T, tt faultCase) {
	srv := fakeprovider.StartSteps(tt.steps...)
	defer srv.Close()
	w := newWorld(t, nil).with("ASK_PROVIDER", "openai", "ASK_BASE_URL", srv.URL, "OPENAI_API_KEY", "fake-test-not-a-real-key-0000")
	w.idle = 300 * time.Millisecond
	wd := w.wd
	if tt.setup != nil {
		tt.setup(t, wd)
	}
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	flags := append([]any{"transcript", transcript}, tt.flags...)

	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	r := w.ask("what now?", flags...)
	took := time.Since(start)
	t.Logf("exit %d after %s; stderr:\n%s", r.code, took.Round(time.Millisecond), r.stderr)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	if r.code != tt.wantCode {
		t.Errorf("exit code %d, want %d; stderr:\n%s", r.code, tt.wantCode, r.stderr)
	}
	if tt.wantOut != "" && r.answer() != tt.wantOut {
		t.Errorf("answer %q, want %q", r.answer(), tt.wantOut)
	}
	if tt.wantCode != 0 && r.answer() != "" {
		t.Errorf("answer %q, want nothing: a failed run prints no answer", r.answer())
	}
	runtest.CheckStderr(t, r.stderr, tt.wantErr, tt.wantCode != 0)
	if tt.maxTime > 0 && took > tt.maxTime {
		t.Errorf("took %s, want under %s", took, tt.maxTime)
	}
	if n := len(srv.Requests()); n != tt.wantCalls {
		t.Errorf("%d requests, want %d", n, tt.wantCalls)
	}
	// Nothing is held whole in memory: not a 100 MB tool output, not a body.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("the run allocated %d MB", grew>>20)
	}

	evs := runtest.ReadTranscript(t, transcript)
	if got := runtest.Summarize(evs); strings.Join(got, ", ") != strings.Join(tt.wantEvents, ", ") {
		t.Fatalf("transcript events:\n  %s\nwant:\n  %s", strings.Join(got, ", "), strings.Join(tt.wantEvents, ", "))
	}
	if tt.wantCode != 0 {
		errEv := evs[len(evs)-2]
		if last := runtest.LastLine(r.stderr); !strings.Contains(last, errEv.Error) && errEv.Error != "timeout reached" {
			t.Errorf("stderr %q does not carry the error event's %q", last, errEv.Error)
		}
	}
	if tt.check != nil {
		tt.check(t, evs, wd)
	}
}

func TestConnectionRefusedIsAProviderError(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	w := newWorld(t, nil).with("ASK_PROVIDER", "openai", "ASK_BASE_URL", "http://"+addr, "OPENAI_API_KEY", "fake-test-not-a-real-key-0000")
	r := w.ask("hi", "retries", 1, "transcript", transcript)
	if r.code != 3 {
		t.Errorf("exit code %d, want 3; stderr %s", r.code, r.stderr)
	}
	runtest.CheckStderr(t, r.stderr, "ask: openai: connection to the provider failed: dial tcp "+addr, true)
	if !strings.Contains(r.stderr, "ask: retry 1 in ") {
		t.Errorf("no retry note on stderr: %q", r.stderr)
	}
	want := "run.started, request, retry 1, request, error, run.finished error 3"
	if got := strings.Join(runtest.Summarize(runtest.ReadTranscript(t, transcript)), ", "); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

func TestRetriesFlag(t *testing.T) {
	t.Parallel()
	fail := fakeprovider.Reply{Status: 503, Header: http.Header{"Retry-After-Ms": {"1"}}, Body: `{"error":{"message":"overloaded"}}`}
	tests := []struct {
		flags     []any
		wantCalls int
		wantCode  int
	}{
		{nil, 3, 3},
		{[]any{"retries", 0}, 1, 3},
		{[]any{"retries", 4}, 5, 3},
		{[]any{"retries", -1}, 0, 2},
	}
	for _, tt := range tests {
		srv := fakeprovider.StartSteps(fakeprovider.Serve(fail))
		r := newWorld(t, srv).ask("hi", tt.flags...)
		srv.Close()
		if r.code != tt.wantCode || len(srv.Requests()) != tt.wantCalls {
			t.Errorf("%v: exit %d after %d requests, want %d after %d; stderr %s", tt.flags, r.code, len(srv.Requests()), tt.wantCode, tt.wantCalls, r.stderr)
		}
		if retries := strings.Count(r.stderr, "ask: retry "); tt.wantCalls > 0 && retries != tt.wantCalls-1 {
			t.Errorf("%v: %d retry notes on stderr, want %d", tt.flags, retries, tt.wantCalls-1)
		}
	}
}

// bigArguments streams one tool call whose arguments are size bytes, in
// deltas of 64 KiB, as a model writing a huge file would.
func bigArguments(size int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(delta string) error {
			_, err := fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":%s}]}\n\n", delta)
			return err
		}
		event(`{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"big.txt\",\"content\":\""}}]}`)
		const piece = 64 << 10
		delta := []byte("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":" +
			`{"tool_calls":[{"index":0,"function":{"arguments":"` + strings.Repeat("x", piece) + `"}}]}}]}` + "\n\n")
		for sent := 0; sent < size; sent += piece {
			if _, err := w.Write(delta); err != nil {
				return // ask hung up
			}
		}
		event(`{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}`)
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
	})
}

// A reply over ask's caps ends the run as a malformed reply: exit 3, one
// line naming the cap, run.finished written, and memory bounded by the cap
// rather than by what the provider sends. Not parallel: it weighs the run
// by the process's allocations.
func TestReplyCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it streams replies of many megabytes")
	}
	for _, tt := range []struct {
		name    string
		size    int
		wantErr string
	}{
		{"a response of 100 MiB", 100 << 20, "the reply is larger than 32 MiB"},
		{"a response of 300 MiB", 300 << 20, "the reply is larger than 32 MiB"},
		{"arguments over 4 MiB", 5 << 20, "the arguments of the write_file call are larger than 4 MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.StartSteps(bigArguments(tt.size))
			defer srv.Close()
			transcript := filepath.Join(t.TempDir(), "run.jsonl")
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			r := newWorld(t, srv).ask("write a big file", "yes", true, "transcript", transcript)
			runtime.ReadMemStats(&after)
			if r.code != fault.ExitProvider {
				t.Errorf("exit %d, want 3; stderr:\n%s", r.code, r.stderr)
			}
			if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], tt.wantErr) {
				t.Errorf("stderr %q, want one line saying %q", r.stderr, tt.wantErr)
			}
			evs := r.events
			if last := evs[len(evs)-1]; last.Type != records.TypeRunFinished || last.ExitCode != 3 {
				t.Errorf("transcript ends with %v", runtest.Summarize(evs[len(evs)-1:]))
			}
			// Before the cap, a 100 MiB reply allocated over 1.4 GiB and a
			// 300 MiB one 4.7 GiB. What a reply within the cap costs (its
			// copy for the response event, the stream's accumulation, the
			// events' JSON) is about ten times its size; the bound is that,
			// whatever the provider sends.
			grew := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d MiB for a %d MiB reply", grew>>20, tt.size>>20)
			times := uint64(12)
			if raceEnabled {
				times = 16
			}
			if grew > times*providers.MaxResponseBytes {
				t.Errorf("the run allocated %d MiB, over %d× the %d MiB cap", grew>>20, times, providers.MaxResponseBytes>>20)
			}
		})
	}
}

// deepJSON is a JSON array nested n levels deep.
func deepJSON(n int) string {
	return strings.Repeat("[", n) + strings.Repeat("]", n)
}

// A reply nested deeper than a transcript can record is malformed: exit 3,
// with run.finished, and --json does not call it completed.
func TestDeeplyNestedReplyIsMalformed(t *testing.T) {
	t.Parallel()
	deep := `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop",` +
		`"message":{"role":"assistant","content":"hi","extra":` + deepJSON(20000) + `}}]}`
	deepStream := "data: " + `{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi","extra":` +
		deepJSON(20000) + `}}]}` + "\n\ndata: [DONE]\n\n"
	for _, tt := range []struct {
		name  string
		body  string
		flags []any
	}{
		{"plain", deep, []any{"no-stream", true}},
		{"stream", deepStream, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.Start(fakeprovider.Reply{Body: tt.body})
			defer srv.Close()
			r := newWorld(t, srv).ask("q", tt.flags...)
			if r.code != fault.ExitProvider {
				t.Errorf("exit %d, want 3; stderr: %s", r.code, r.stderr)
			}
			if out := r.summary(); out.Status != "error" || out.ExitCode != 3 {
				t.Errorf("--json = %+v", out)
			}
			if !strings.Contains(runtest.LastLine(r.stderr), "nests deeper than") {
				t.Errorf("stderr %q does not say what was wrong", r.stderr)
			}
			evs := r.events
			if last := evs[len(evs)-1]; last.Type != "run.finished" || last.ExitCode != 3 {
				t.Errorf("transcript ends with %v", runtest.Summarize(evs[len(evs)-1:]))
			}
		})
	}
}

// A stream line longer than ask reads is a provider's fault: exit 3, in a
// run (with run.finished) as in `ask provider send` (cmd/ask's
// TestOverlongStreamLineInSend).
func TestOverlongStreamLineIsProviderError(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it waits out a stream")
	}
	t.Parallel()
	overlong := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: ")
		chunk := []byte(strings.Repeat("x", 1<<20))
		for range 65 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	srv := fakeprovider.StartSteps(overlong)
	defer srv.Close()
	r := newWorld(t, srv).ask("q")
	if r.code != fault.ExitProvider {
		t.Errorf("run: exit %d, want 3; stderr: %s", r.code, r.stderr)
	}
	if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 {
		t.Errorf("run: stderr %q, want one line", r.stderr)
	}
	evs := r.events
	if last := evs[len(evs)-1]; last.Type != "run.finished" || last.ExitCode != 3 {
		t.Errorf("transcript ends with %v", runtest.Summarize(evs[len(evs)-1:]))
	}

}

// faultyBody gives some bytes of a reply, then panics: a stand-in for a
// fault in ask between the provider's bytes and the loop, since no reply
// is known to make a parser panic now.
type faultyBody struct{ r io.Reader }

func (b *faultyBody) Read(p []byte) (int, error) {
	if n, _ := b.r.Read(p); n > 0 {
		return n, nil
	}
	panic("fault while reading the reply")
}

func (*faultyBody) Close() error { return nil }

type faultyTransport struct{ contentType, prefix string }

func (t faultyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {t.contentType}},
		Body: &faultyBody{strings.NewReader(t.prefix)}, Request: req}, nil
}

// A panic while a reply is read, streamed or not, ends the run with exit 3
// (a malformed response) and a one-line message, never a stack trace, and
// the transcript still ends with run.finished.
func TestFaultReadingAReplyIsAnError(t *testing.T) {
	for _, tt := range []struct {
		name  string
		t     faultyTransport
		flags []any
	}{
		{"streamed", faultyTransport{"text/event-stream", "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"}, nil},
		{"not streamed", faultyTransport{"application/json", `{"choices":[`}, []any{"no-stream", true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, nil).with("ASK_PROVIDER", "openai", "ASK_BASE_URL", "http://provider.invalid/v1",
				"OPENAI_API_KEY", "fake-test-not-a-real-key-0000")
			w.http = &http.Client{Timeout: 30 * time.Second, Transport: tt.t}
			r := w.ask("hello", tt.flags...)
			if r.code != fault.ExitProvider || !strings.Contains(r.stderr, "malformed response") || strings.Contains(r.stderr, "goroutine") {
				t.Fatalf("exit %d, stderr %q; want exit %d and a malformed response, without a stack trace", r.code, r.stderr, fault.ExitProvider)
			}
			events := r.events
			if last := events[len(events)-1]; last.Type != records.TypeRunFinished || last.Status != "error" {
				t.Errorf("last event %+v: want run.finished with status error", last)
			}
		})
	}
}

// Runs at once share only the history directory: each keeps its own
// whole transcript, pruning leaves no broken file and no temporary one,
// and the list afterwards reads every kept run (DESIGN §8).
func TestHistoryUnderConcurrentRuns(t *testing.T) {
	t.Parallel()
	const runs = 8
	var replies []fakeprovider.Reply
	for range runs {
		replies = append(replies, fakeprovider.Reply{Text: "ok"})
	}
	srv := fakeprovider.Start(replies...)
	defer srv.Close()
	state := t.TempDir()
	for _, limit := range []string{"", "3"} {
		w := newWorld(t, srv).with("XDG_STATE_HOME", state, "ASK_HISTORY_RUNS", limit)
		var wg sync.WaitGroup
		for i := range runs / 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r := w.ask(fmt.Sprint("run ", i), "no-tools", true); r.code != 0 {
					t.Errorf("run %d: exit %d: %s", i, r.code, r.stderr)
				}
			}()
		}
		wg.Wait()
		store, err := history.Open(func(k string) string { return w.vars[k] })
		if err != nil {
			t.Fatal(err)
		}
		list, err := store.List()
		if err != nil {
			t.Fatalf("the list of kept runs: %v", err)
		}
		want := runs / 2
		if limit == "3" {
			want = 3
		}
		if len(list) != want {
			t.Errorf("ASK_HISTORY_RUNS=%q: %d runs listed, want %d", limit, len(list), want)
		}
		for _, e := range list {
			if e.Status != "completed" {
				t.Errorf("run %s is %q", e.ID, e.Status)
			}
		}
		files, _ := os.ReadDir(filepath.Join(state, "ask", "runs"))
		if len(files) != want {
			t.Errorf("%d files kept, want %d (no temporary ones)", len(files), want)
		}
	}
}
