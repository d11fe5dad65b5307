package loop_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
)

// checkedBox refuses arguments holding "Command" and records what ran.
type checkedBox struct {
	mu  sync.Mutex
	ran []string
}

func (b *checkedBox) CheckArguments(name, args string) error {
	if strings.Contains(args, `"Command"`) {
		return errors.New("invalid arguments for shell: keys differ only in case")
	}
	return nil
}

func (b *checkedBox) Call(_ context.Context, name, args string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ran = append(b.ran, args)
	return "ran", false
}

// askedGate allows everything and remembers what it was asked about, as a
// person at the prompt would see it.
type askedGate struct{ asked []string }

func (g *askedGate) Check(_ context.Context, calls []providers.ToolCall) []policy.Verdict {
	out := make([]policy.Verdict, len(calls))
	for i, c := range calls {
		g.asked = append(g.asked, c.Arguments)
		out[i].Allowed = true
	}
	return out
}

// A call whose arguments the tools refuse is answered with why, and never
// put to the gate: nobody approves a value the tool would not see.
func TestRefusedArgumentsNeverReachTheGate(t *testing.T) {
	t.Parallel()
	box, gate := &checkedBox{}, &askedGate{}
	calls := []providers.ToolCall{
		{ID: "1", Name: "shell", Arguments: `{"command":"git status","Command":"touch PWN"}`},
		{ID: "2", Name: "shell", Arguments: `{"command":"ls"}`},
	}
	var unreadable []string
	out := loop.RunCalls(context.Background(), gate, box, calls, loop.CallHooks{
		OnUnreadable: func(c providers.ToolCall) { unreadable = append(unreadable, c.ID) },
	})
	if len(gate.asked) != 1 || gate.asked[0] != `{"command":"ls"}` {
		t.Errorf("the gate was asked about %q", gate.asked)
	}
	if len(box.ran) != 1 || box.ran[0] != `{"command":"ls"}` {
		t.Errorf("ran %q", box.ran)
	}
	if !out[0].Result.IsError || !strings.Contains(out[0].Result.Content, "differ only in case") || out[0].Denied {
		t.Errorf("refused call answered %+v", out[0])
	}
	if len(unreadable) != 1 || unreadable[0] != "1" {
		t.Errorf("unreadable hook saw %q", unreadable)
	}
	if calls[0].Unreadable != "" {
		t.Error("RunCalls changed the caller's calls")
	}
}

// idBox answers each call with the call id its context carries.
type idBox struct{}

func (idBox) Call(ctx context.Context, _, _ string) (string, bool) { return loop.CallID(ctx), false }

// Each call's context names the call, so that a tracer can tie the tool's
// own requests to the call's span; outside a call there is none.
func TestCallContextNamesTheCall(t *testing.T) {
	t.Parallel()
	out := loop.RunCalls(context.Background(), nil, idBox{}, []providers.ToolCall{
		{ID: "c1", Name: "a", Arguments: "{}"}, {ID: "c2", Name: "b", Arguments: "{}"},
	}, loop.CallHooks{})
	if out[0].Result.Content != "c1" || out[1].Result.Content != "c2" {
		t.Errorf("the calls saw ids %q and %q", out[0].Result.Content, out[1].Result.Content)
	}
	if id := loop.CallID(context.Background()); id != "" {
		t.Errorf("CallID outside a call = %q", id)
	}
}
