package loop_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

// verdictGate gives each call the verdict its name is mapped to, and
// allows the rest.
type verdictGate map[string]policy.Verdict

func (g verdictGate) Check(_ context.Context, calls []providers.ToolCall) []policy.Verdict {
	out := make([]policy.Verdict, len(calls))
	for i, c := range calls {
		v, ok := g[c.Name]
		if !ok {
			v = policy.Verdict{Allowed: true}
		}
		out[i] = v
	}
	return out
}

var wait = policy.Verdict{Deferred: true, Reason: "a reviewer decides"}

// Two calls of a step are deferred, the step's third runs, no request
// follows, and carrying the run on under a gate that allows them runs
// them, answers every id in call order and goes on to the answer.
func TestDeferAndResume(t *testing.T) {
	t.Parallel()
	tools := []providers.Tool{{Name: "read_file"}, {Name: "write_file"}, {Name: "shell"}}
	box := &fakeTools{}
	step := calls(call("c1", "write_file", `{"path":"a"}`), call("c2", "read_file", `{"path":"b"}`), call("c3", "shell", `{"command":"ls"}`))
	first := runLoop(t, context.Background(), box, loop.Config{Gate: verdictGate{"write_file": wait, "shell": wait}, Tools: tools},
		step, text("never asked"))
	res := first.res
	if res.Status != loop.StatusDeferred {
		t.Fatalf("status %s (%v), want deferred", res.Status, res.Err)
	}
	if n := len(first.srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: no request follows a deferral", n)
	}
	if !slices.Equal(box.calls, []string{`read_file {"path":"b"}`}) {
		t.Errorf("tools ran %q, want only the call that was not deferred", box.calls)
	}
	want := []loop.Deferred{{ID: "c1", Name: "write_file", Arguments: `{"path":"a"}`, Reason: "a reviewer decides"},
		{ID: "c3", Name: "shell", Arguments: `{"command":"ls"}`, Reason: "a reviewer decides"}}
	if !slices.Equal(res.Deferred, want) {
		t.Errorf("deferred %+v, want %+v", res.Deferred, want)
	}
	var deferredEvents []string
	for _, ev := range first.events {
		if ev.Type == records.TypeToolDeferred {
			deferredEvents = append(deferredEvents, ev.ID+" "+ev.Reason)
		}
	}
	if !slices.Equal(deferredEvents, []string{"c1 a reviewer decides", "c3 a reviewer decides"}) {
		t.Errorf("tool.deferred events %q, want one per deferred call", deferredEvents)
	}
	if p := res.Paused; p == nil || !slices.Equal(p.Deferred, []int{0, 2}) || p.Results[1].Content != `read_file({"path":"b"}) ok` {
		t.Fatalf("paused step %+v, want calls 0 and 2 waiting and call 1's result held", res.Paused)
	}

	// Resumed: the shell call is allowed now, the write denied.
	box2 := &fakeTools{}
	gate := verdictGate{"write_file": {Reason: "the reviewer said no"}}
	second := runLoop(t, context.Background(), box2, loop.Config{Gate: gate, Tools: tools, History: res.History,
		Resume: &loop.Resume{Step: res.Steps, Usage: res.Usage, UsagePerStep: res.UsagePerStep, Paused: res.Paused}},
		text("done"))
	if second.res.Status != loop.StatusCompleted || second.res.Answer != "done" {
		t.Fatalf("resumed: status %s answer %q (%v)", second.res.Status, second.res.Answer, second.res.Err)
	}
	if !slices.Equal(box2.calls, []string{`shell {"command":"ls"}`}) {
		t.Errorf("resumed run ran %q, want only the allowed deferred call (the read keeps its result)", box2.calls)
	}
	reqs := second.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	var ids, contents []string
	for _, m := range gjson.GetBytes(reqs[0], "messages").Array() {
		if m.Get("role").String() == "tool" {
			ids = append(ids, m.Get("tool_call_id").String())
			contents = append(contents, m.Get("content").String())
		}
	}
	if !slices.Equal(ids, []string{"c1", "c2", "c3"}) {
		t.Errorf("answered ids %q, want every call in order", ids)
	}
	if len(contents) == 3 && (!strings.Contains(contents[0], "the reviewer said no") || contents[1] != `read_file({"path":"b"}) ok` || contents[2] != `shell({"command":"ls"}) ok`) {
		t.Errorf("results %q", contents)
	}
	if second.res.Steps != 2 {
		t.Errorf("steps %d, want 2 (the paused step, then the answer)", second.res.Steps)
	}
}

// A call the resumed gate defers again keeps the run paused, with no
// request.
func TestResumeUndecidedStaysDeferred(t *testing.T) {
	t.Parallel()
	tools := []providers.Tool{{Name: "shell"}}
	first := runLoop(t, context.Background(), &fakeTools{}, loop.Config{Gate: verdictGate{"shell": wait}, Tools: tools},
		calls(call("c1", "shell", `{"command":"ls"}`)))
	box := &fakeTools{}
	again := runLoop(t, context.Background(), box, loop.Config{Gate: verdictGate{"shell": wait}, Tools: tools, History: first.res.History,
		Resume: &loop.Resume{Step: first.res.Steps, Paused: first.res.Paused}})
	if again.res.Status != loop.StatusDeferred || len(again.srv.Requests()) != 0 || len(box.calls) != 0 {
		t.Errorf("status %s, %d requests, calls %q: want deferred again, nothing sent or run", again.res.Status, len(again.srv.Requests()), box.calls)
	}
	if len(again.res.Deferred) != 1 || again.res.Deferred[0].ID != "c1" {
		t.Errorf("deferred %+v, want c1", again.res.Deferred)
	}
}
