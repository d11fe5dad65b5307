package loop_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/openai"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/tools"
)

// fakeTools answers every call with "NAME(ARGS) ok" and records the calls.
// Calls named "rendezvous" wait until `want` of them are running at once,
// which proves concurrency without timing anything.
type fakeTools struct {
	mu      sync.Mutex
	calls   []string
	want    int
	arrived int
	all     chan struct{}
}

func (f *fakeTools) Call(ctx context.Context, name, args string) (string, bool) {
	f.mu.Lock()
	f.calls = append(f.calls, name+" "+args)
	if name == "rendezvous" {
		if f.all == nil {
			f.all = make(chan struct{})
		}
		f.arrived++
		if f.arrived == f.want {
			close(f.all)
		}
		all := f.all
		f.mu.Unlock()
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			return "calls did not run concurrently", true
		}
		return fmt.Sprintf("rendezvous %s ok", args), false
	}
	f.mu.Unlock()
	if name == "fail" {
		return "it broke", true
	}
	return fmt.Sprintf("%s(%s) ok", name, args), false
}

type run struct {
	res    *loop.Result
	srv    *fakeprovider.Server
	events []records.Event
}

func runLoop(t *testing.T, ctx context.Context, box loop.Toolbox, cfg loop.Config, replies ...fakeprovider.Reply) run {
	t.Helper()
	srv := fakeprovider.Start(replies...)
	t.Cleanup(srv.Close)
	var buf bytes.Buffer
	cfg.Model = &providers.Caller{Provider: "fake", Protocol: openai.New(), BaseURL: srv.URL, Model: "m", Key: "k",
		Sleep: func(context.Context, time.Duration) error { return nil }}
	cfg.Toolbox = box
	cfg.Recorder = records.NewRecorder(&buf)
	cfg.Recorder.Emit(records.Event{Type: records.TypeRunStarted})
	if cfg.Prompt == "" {
		cfg.Prompt = "question"
	}
	if cfg.Tools == nil {
		cfg.Tools = []providers.Tool{{Name: "read_file"}, {Name: "rendezvous"}, {Name: "fail"}}
	}
	res := loop.Run(ctx, cfg)
	events, err := records.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return run{res: res, srv: srv, events: events}
}

func text(s string) fakeprovider.Reply { return fakeprovider.Reply{Text: s} }

func calls(cs ...providers.ToolCall) fakeprovider.Reply { return fakeprovider.Reply{Calls: cs} }

var call = fakeprovider.Call

func TestLoop(t *testing.T) {
	fixture := func(name string) fakeprovider.Reply {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return fakeprovider.Reply{Body: string(b)}
	}
	tests := []struct {
		name       string
		stream     bool
		maxSteps   int
		replies    []fakeprovider.Reply
		wantStatus string
		wantAnswer string
		wantTools  []string // calls the toolbox saw, in order (sorted when concurrent)
		// check inspects the last request body.
		check func(t *testing.T, last []byte)
	}{
		{
			name:       "answer without tools",
			replies:    []fakeprovider.Reply{text("42")},
			wantStatus: loop.StatusCompleted, wantAnswer: "42",
		},
		{
			name:       "one call then answer",
			stream:     true,
			replies:    []fakeprovider.Reply{calls(call("c1", "read_file", `{"path":"go.mod"}`)), text("it is a Go module")},
			wantStatus: loop.StatusCompleted, wantAnswer: "it is a Go module",
			wantTools: []string{`read_file {"path":"go.mod"}`},
			check: func(t *testing.T, last []byte) {
				msgs := gjson.GetBytes(last, "messages").Array()
				tool := msgs[len(msgs)-1]
				if tool.Get("role").String() != "tool" || tool.Get("tool_call_id").String() != "c1" ||
					tool.Get("content").String() != `read_file({"path":"go.mod"}) ok` {
					t.Errorf("last message = %s, want the tool result for c1", tool.Raw)
				}
				if got := msgs[len(msgs)-2].Get("tool_calls.0.function.arguments").String(); got != `{"path":"go.mod"}` {
					t.Errorf("echoed arguments = %q", got)
				}
			},
		},
		{
			name:   "parallel calls run concurrently, results in call order",
			stream: true,
			replies: []fakeprovider.Reply{calls(call("a", "rendezvous", `{"n":1}`), call("b", "rendezvous", `{"n":2}`), call("c", "rendezvous", `{"n":3}`)),
				text("done")},
			wantStatus: loop.StatusCompleted, wantAnswer: "done",
			check: func(t *testing.T, last []byte) {
				msgs := gjson.GetBytes(last, "messages").Array()
				results := msgs[len(msgs)-3:]
				for i, id := range []string{"a", "b", "c"} {
					want := fmt.Sprintf(`rendezvous {"n":%d} ok`, i+1)
					if results[i].Get("tool_call_id").String() != id || results[i].Get("content").String() != want {
						t.Errorf("result %d = %s, want id %s content %q", i, results[i].Raw, id, want)
					}
				}
			},
		},
		{
			name: "chain of steps",
			replies: []fakeprovider.Reply{calls(call("1", "read_file", `{"path":"a"}`)), calls(call("2", "read_file", `{"path":"b"}`)),
				calls(call("3", "read_file", `{"path":"c"}`)), text("a, b and c read")},
			wantStatus: loop.StatusCompleted, wantAnswer: "a, b and c read",
			wantTools: []string{`read_file {"path":"a"}`, `read_file {"path":"b"}`, `read_file {"path":"c"}`},
		},
		{
			name:       "failed tool is an error result and the loop goes on",
			replies:    []fakeprovider.Reply{calls(call("x", "fail", `{}`)), text("it failed, sorry")},
			wantStatus: loop.StatusCompleted, wantAnswer: "it failed, sorry",
			wantTools: []string{"fail {}"},
			check: func(t *testing.T, last []byte) {
				if got := gjson.GetBytes(last, "messages.#(role==\"tool\").content").String(); !strings.Contains(got, "it broke") {
					t.Errorf("tool message content = %q, want the failure", got)
				}
			},
		},
		{
			name:     "max steps stops with the partial answer",
			maxSteps: 2,
			replies: []fakeprovider.Reply{{Text: "looking", Calls: []providers.ToolCall{call("1", "read_file", `{"path":"a"}`)}},
				{Text: "still looking", Calls: []providers.ToolCall{call("2", "read_file", `{"path":"b"}`)}}, text("never asked")},
			wantStatus: loop.StatusMaxSteps, wantAnswer: "still looking",
			wantTools: []string{`read_file {"path":"a"}`},
		},
		{
			name: "identical calls within one step are not a repeat",
			replies: []fakeprovider.Reply{calls(call("1", "read_file", `{}`), call("2", "read_file", `{}`), call("3", "read_file", `{}`)),
				text("three topics")},
			wantStatus: loop.StatusCompleted, wantAnswer: "three topics",
			wantTools: []string{"read_file {}", "read_file {}", "read_file {}"},
		},
		{
			name:       "recorded chain of two calls",
			replies:    []fakeprovider.Reply{fixture("llm-chain-of-two-calls-1.json"), fixture("llm-chain-of-two-calls-2.json"), text("no dragons")},
			wantStatus: loop.StatusCompleted, wantAnswer: "no dragons",
			wantTools: []string{`lookup_population {"country":"Crumpet"}`, `can_have_dragons {"population":123124}`},
			check: func(t *testing.T, last []byte) {
				ids := gjson.GetBytes(last, `messages.#(role=="tool")#.tool_call_id`).Array()
				if len(ids) != 2 || ids[0].String() != "call_TTY8UFNo7rNCaOBUNtlRSvMG" || ids[1].String() != "call_aq9UyiSFkzX6W8Ydc33DoI9Y" {
					t.Errorf("tool results answer %v, want both recorded call ids in order", ids)
				}
			},
		},
		{
			name:       "recorded parallel calls (non-stream fixture)",
			replies:    []fakeprovider.Reply{fixture("fantasy-gpt4o-multi-tool.json"), text("6 and 6")},
			wantStatus: loop.StatusCompleted, wantAnswer: "6 and 6",
			check: func(t *testing.T, last []byte) {
				ids := gjson.GetBytes(last, `messages.#(role=="tool")#.tool_call_id`).Array()
				calls := gjson.GetBytes(last, `messages.#(role=="assistant").tool_calls.#.id`).Array()
				if len(ids) != 2 || len(calls) != 2 || ids[0].String() != calls[0].String() || ids[1].String() != calls[1].String() {
					t.Errorf("tool results %v do not answer calls %v in order", ids, calls)
				}
			},
		},
		{
			name:       "recorded parallel calls (stream fixture)",
			stream:     true,
			replies:    []fakeprovider.Reply{fixture("fantasy-gpt4o-multi-tool-stream.sse"), text("6 and 6")},
			wantStatus: loop.StatusCompleted, wantAnswer: "6 and 6",
			check: func(t *testing.T, last []byte) {
				if n := len(gjson.GetBytes(last, `messages.#(role=="tool")#`).Array()); n != 2 {
					t.Errorf("%d tool results, want 2", n)
				}
			},
		},
		{
			name:       "calls without ids get generated ones, used consistently",
			replies:    []fakeprovider.Reply{fixture("pydantic-compatible-tool-calls-without-id.json"), text("ok")},
			wantStatus: loop.StatusCompleted, wantAnswer: "ok",
			check: func(t *testing.T, last []byte) {
				id := gjson.GetBytes(last, `messages.#(role=="tool").tool_call_id`).String()
				echoed := gjson.GetBytes(last, `messages.#(role=="assistant").tool_calls.0.id`).String()
				if id == "" || id != echoed {
					t.Errorf("tool_call_id %q, echoed call id %q: want the same non-empty id", id, echoed)
				}
			},
		},
		{
			name:       "error inside a 200 stream",
			stream:     true,
			replies:    []fakeprovider.Reply{fixture("pydantic-stream-error-in-200.sse")},
			wantStatus: loop.StatusError,
		},
	}
	for _, tt := range tests {
		// A recorded body is either a stream or not; a scripted reply is
		// served in whichever form was asked for, so it runs both ways.
		modes := []bool{false, true}
		for _, r := range tt.replies {
			if r.Body != "" {
				modes = []bool{tt.stream}
				break
			}
		}
		for _, stream := range modes {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				box := &fakeTools{want: 3}
				r := runLoop(t, context.Background(), box, loop.Config{Stream: stream, MaxSteps: tt.maxSteps}, tt.replies...)
				if r.res.Status != tt.wantStatus {
					t.Fatalf("status = %q (err %v), want %q", r.res.Status, r.res.Err, tt.wantStatus)
				}
				if tt.wantAnswer != "" && r.res.Answer != tt.wantAnswer {
					t.Errorf("answer = %q, want %q", r.res.Answer, tt.wantAnswer)
				}
				if tt.wantTools != nil && strings.Join(box.calls, "|") != strings.Join(tt.wantTools, "|") {
					t.Errorf("tools ran %q, want %q", box.calls, tt.wantTools)
				}
				reqs := r.srv.Requests()
				if len(reqs) != r.res.Steps {
					t.Errorf("%d requests for %d steps, want one request a step", len(reqs), r.res.Steps)
				}
				if tt.check != nil {
					tt.check(t, reqs[len(reqs)-1])
				}
			})
		}
	}
}

func TestErrorInStreamIsAnAPIError(t *testing.T) {
	b, err := os.ReadFile("testdata/pydantic-stream-error-in-200.sse")
	if err != nil {
		t.Fatal(err)
	}
	r := runLoop(t, context.Background(), &fakeTools{}, loop.Config{Stream: true}, fakeprovider.Reply{Body: string(b)})
	var apiErr *providers.APIError
	if !errors.As(r.res.Err, &apiErr) || !strings.Contains(apiErr.Message, "Token limit reached") {
		t.Fatalf("err = %v, want the stream's APIError", r.res.Err)
	}
	last := r.events[len(r.events)-1]
	if last.Type != records.TypeError {
		t.Errorf("last event = %s, want error", last.Type)
	}
}

// The real registry turns unknown tools and invalid arguments into error
// results; the loop feeds them back and goes on.
func TestLoopWithRealTools(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "note.txt"), []byte("hello\n"), 0o644)
	root, err := tools.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(tools.Builtins(root)...)
	if err != nil {
		t.Fatal(err)
	}
	r := runLoop(t, context.Background(), reg, loop.Config{Stream: true},
		calls(call("u", "no_such_tool", `{}`), call("j", "read_file", `{"path": "note.txt"`), call("ok", "read_file", `{"path":"note.txt"}`)),
		text("read it"))
	if r.res.Status != loop.StatusCompleted {
		t.Fatalf("status = %s (%v)", r.res.Status, r.res.Err)
	}
	got := r.res.Calls
	if len(got) != 3 || !got[0].IsError || !got[1].IsError || got[2].IsError {
		t.Fatalf("calls = %+v, want unknown and invalid as errors, the third fine", got)
	}
	if !strings.Contains(got[0].Content, "read_file") {
		t.Errorf("unknown-tool result %q does not name the available tools", got[0].Content)
	}
	if !strings.Contains(got[2].Content, "hello") {
		t.Errorf("read_file result %q lacks the file's text", got[2].Content)
	}
	last := r.srv.Requests()[1]
	if n := len(gjson.GetBytes(last, `messages.#(role=="tool")#`).Array()); n != 3 {
		t.Errorf("%d tool results sent back, want every call answered (3)", n)
	}
}

func TestEventsInOrder(t *testing.T) {
	r := runLoop(t, context.Background(), &fakeTools{}, loop.Config{Stream: true},
		calls(call("c1", "read_file", `{"path":"a"}`)), text("done"))
	var types []string
	for _, ev := range r.events {
		types = append(types, ev.Type)
	}
	want := "run.started request response assistant tool.started tool.finished request response assistant"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if r.res.Usage.TotalTokens != 240 {
		t.Errorf("usage total = %d, want 2 × 120", r.res.Usage.TotalTokens)
	}
}

func TestTimeoutAndInterrupt(t *testing.T) {
	for _, tt := range []struct {
		cause error
		want  string
	}{{loop.ErrTimeout, loop.StatusTimeout}, {loop.ErrInterrupted, loop.StatusInterrupted}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(tt.cause)
		r := runLoop(t, ctx, &fakeTools{}, loop.Config{}, text("never"))
		if r.res.Status != tt.want || !errors.Is(r.res.Err, tt.cause) {
			t.Errorf("cancelled with %v: status %q err %v, want %q", tt.cause, r.res.Status, r.res.Err, tt.want)
		}
	}
}

type denyWrites struct{ refusal bool }

func (d denyWrites) Check(_ context.Context, calls []providers.ToolCall) []policy.Verdict {
	out := make([]policy.Verdict, len(calls))
	for i, c := range calls {
		out[i] = policy.Verdict{Allowed: c.Name != "write_file", Reason: "writes are not allowed", Refusal: d.refusal}
	}
	return out
}

func TestGate(t *testing.T) {
	for _, refusal := range []bool{false, true} {
		box := &fakeTools{}
		r := runLoop(t, context.Background(), box, loop.Config{Gate: denyWrites{refusal}, Tools: []providers.Tool{{Name: "write_file"}, {Name: "read_file"}}},
			calls(call("w", "write_file", `{"path":"x"}`), call("r", "read_file", `{"path":"x"}`)), text("could not write"))
		want := loop.StatusCompleted
		if refusal {
			want = loop.StatusDenied
		}
		if r.res.Status != want {
			t.Errorf("refusal=%v: status %q, want %q", refusal, r.res.Status, want)
		}
		if strings.Join(box.calls, "|") != `read_file {"path":"x"}` {
			t.Errorf("tools ran %q, want only the read", box.calls)
		}
		if len(r.res.Denials) != 1 || r.res.Denials[0].ID != "w" {
			t.Errorf("denials = %+v", r.res.Denials)
		}
		last := r.srv.Requests()[1]
		if got := gjson.GetBytes(last, `messages.#(tool_call_id=="w").content`).String(); !strings.Contains(got, "denied: writes are not allowed") {
			t.Errorf("denied call answered with %q", got)
		}
	}
}
