package run

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/settings"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func chatResponse(req *http.Request, r fakeprovider.Reply) *http.Response {
	body := fakeprovider.ChatJSON(r)
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req, ProtoMajor: 1}
}

// A run stopped while its request waits in a batch ends pending, exit 0,
// its transcript ending with the request and a pending run.finished; Continue
// carries it on with the batch's reply (or sends the request again when
// there is none): the tool runs, one request more goes out, and the one
// transcript holds the whole run, which replays as it was recorded.
func TestContinuePendingRun(t *testing.T) {
	t.Parallel()
	readNote := fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "read_file", `{"path":"notes.txt"}`)}}
	for _, tt := range []struct {
		name     string
		reply    *Reply
		requests int // sent by the carried-on run
	}{
		{"with the reply", &Reply{Status: 200, Body: fakeprovider.ChatJSON(readNote)}, 1},
		{"sent again", nil, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := testEnv(t, map[string]string{"OPENAI_API_KEY": "fake-test-key-0000"})
			if err := os.WriteFile(filepath.Join(e.Wd, "notes.txt"), []byte("hello from the note\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: Settings{Values: settings.Values{
				Provider: Given("openai", "test"), BaseURL: Given("http://batch.invalid/v1", "test"), Mode: Given("ask", "test"), NoStream: Given(true, "test")}}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancelCause(context.Background())
			defer stop(nil)
			e.HTTP = &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
				stop(loop.ErrPending) // held: the batch is left pending
				<-req.Context().Done()
				return nil, context.Cause(req.Context())
			})}
			r, err := New(ctx, s, e)
			if err != nil {
				t.Fatal(err)
			}
			var first bytes.Buffer
			res := r.Execute(ctx, "what does notes.txt say?", Output{Sinks: []io.Writer{&first}})
			r.Close()
			if res.Status != loop.StatusPending || res.ExitCode != 0 || res.Why != "" {
				t.Fatalf("held run: %s, exit %d, %q", res.Status, res.ExitCode, res.Why)
			}
			if id, err := ReadPending(first.Bytes()); err != nil || id != res.ID {
				t.Fatalf("ReadPending: %q, %v", id, err)
			}

			var sent atomic.Int32
			e.HTTP = &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if sent.Add(1) == 1 && tt.reply == nil {
					return chatResponse(req, readNote), nil
				}
				return chatResponse(req, fakeprovider.Reply{Text: "The note says hello."}), nil
			})}
			r, err = New(context.Background(), s, e)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var whole bytes.Buffer
			res2 := r.Continue(context.Background(), first.Bytes(), tt.reply, Output{Sinks: []io.Writer{&whole}})
			if res2.Status != loop.StatusCompleted || res2.Answer != "The note says hello." || res2.ID != res.ID || res2.Steps != 2 {
				t.Fatalf("carried on: %s %q, run %s (was %s), %d steps: %v", res2.Status, res2.Answer, res2.ID, res.ID, res2.Steps, res2.Err)
			}
			if n := int(sent.Load()); n != tt.requests {
				t.Errorf("%d requests sent, want %d", n, tt.requests)
			}
			if !bytes.HasPrefix(whole.Bytes(), first.Bytes()) {
				t.Fatal("the transcript does not start with the pending run's")
			}
			events, err := records.Read(bytes.NewReader(whole.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			count := map[string]int{}
			for _, ev := range events {
				count[ev.Type]++
				if ev.Type == records.TypeToolFinished && !strings.Contains(ev.Content, "hello from the note") {
					t.Errorf("the tool did not run: %q", ev.Content)
				}
			}
			last := events[len(events)-1]
			if count[records.TypeRunStarted] != 1 || count[records.TypeRequest] != 2 || count[records.TypeResponse] != 2 ||
				count[records.TypeToolFinished] != 1 || last.Status != loop.StatusCompleted || last.Steps != 2 {
				t.Errorf("transcript: %v, ending %s after %d steps", count, last.Status, last.Steps)
			}

			// The whole transcript replays offline, request for request.
			replayed, prompt, rp, err := FromTranscript(events, ReplayOptions{Check: true, Workdir: e.Wd})
			if err != nil {
				t.Fatal(err)
			}
			re := testEnv(t, nil)
			re.Wd, re.Replay = e.Wd, rp
			execute(t, replayed, re, prompt, func(res *Result) {
				if res.Status != loop.StatusCompleted || res.Answer != "The note says hello." {
					t.Errorf("replay: %s %q: %v", res.Status, res.Answer, res.Err)
				}
			})
			if diffs := rp.Report(); diffs != "" {
				t.Errorf("the replay differs:\n%s", diffs)
			}
		})
	}
}

// A transcript that is not a pending run's is refused, saying why.
func TestReadPendingRefuses(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"finished": `{"type":"run.started","time":"2026-11-23T12:00:00Z","id":"20261123-120000.000000-0001"}` + "\n" +
			`{"type":"run.finished","time":"2026-11-23T12:00:01Z","status":"completed"}` + "\n",
		"killed": `{"type":"run.started","time":"2026-11-23T12:00:00Z","id":"20261123-120000.000000-0001"}` + "\n",
		"empty":  "",
	} {
		if _, err := ReadPending([]byte(text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
