package loop_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/openai"
	"github.com/ask-cli/ask/internal/providers/textproto"
	"github.com/ask-cli/ask/internal/records"
)

// switchingModel changes its caller's protocol after the first step, as
// the run's fallback to the text protocol does.
type switchingModel struct {
	*providers.Caller
	next providers.Protocol
}

func (m *switchingModel) Call(ctx context.Context, req providers.Request, h providers.Hooks) (*providers.Turn, error) {
	turn, err := m.Caller.Call(ctx, req, h)
	m.Caller.Protocol = m.next
	return turn, err
}

// The loop renders history in the protocol the model reports now, not in
// one it was given at the start: the tool results of a model that moved
// to the text protocol are its user message, not Chat Completions' tool
// messages.
func TestLoopFollowsTheModelsProtocol(t *testing.T) {
	srv := fakeprovider.Start(calls(call("1", "read_file", `{"path":"a"}`)), text("done"))
	defer srv.Close()
	tools := []providers.Tool{{Name: "read_file"}}
	m := &switchingModel{Caller: &providers.Caller{Provider: "fake", Protocol: openai.New(), BaseURL: srv.URL, Model: "m", Key: "k",
		Sleep: func(context.Context, time.Duration) error { return nil }}, next: textproto.Wrap(openai.New(), textproto.JSON, tools)}
	res := loop.Run(context.Background(), loop.Config{Model: m, Prompt: "q", Tools: tools, Toolbox: &fakeTools{}})
	if res.Status != loop.StatusCompleted {
		t.Fatalf("status %s: %v", res.Status, res.Err)
	}
	inFirst, inSecond := 0, 0
	for _, msg := range res.History {
		switch role := gjson.GetBytes(msg, "role").String(); {
		case role == "tool":
			inFirst++
		case role == "user" && strings.Contains(gjson.GetBytes(msg, "content").String(), `<tool_result call="1"`):
			inSecond++
		}
	}
	if inFirst != 0 || inSecond != 1 {
		t.Errorf("tool results rendered %d times in the first protocol and %d in the second; want 0 and 1\n%s", inFirst, inSecond, res.History)
	}
}

// panickingModel fails the way a parser bug would, inside Call.
type panickingModel struct{}

func (panickingModel) CurrentProtocol() providers.Protocol { return openai.New() }
func (panickingModel) Call(context.Context, providers.Request, providers.Hooks) (*providers.Turn, error) {
	var steps []int
	_ = steps[1] // index out of range, as the text protocol's slice bug was
	return nil, nil
}

// A panic inside the model's call ends the run as an error, a malformed
// reply, with an error event for the transcript, never as a crash.
func TestModelPanicEndsTheRunAsAnError(t *testing.T) {
	var buf bytes.Buffer
	rec := records.NewRecorder(&buf)
	rec.Emit(records.Event{Type: records.TypeRunStarted})
	res := loop.Run(context.Background(), loop.Config{Model: panickingModel{}, Prompt: "q", Toolbox: &fakeTools{}, Recorder: rec})
	if res.Status != loop.StatusError || !errors.Is(res.Err, providers.ErrMalformed) {
		t.Fatalf("status %s, error %v; want error and one wrapping providers.ErrMalformed", res.Status, res.Err)
	}
	if msg := res.Err.Error(); !strings.Contains(msg, "openai") || strings.Contains(msg, "goroutine") {
		t.Errorf("error %q should name the protocol and hold no stack trace", msg)
	}
	events, err := records.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 || events[len(events)-1].Type != records.TypeError {
		t.Errorf("events %+v: want the run to end with an error event", events)
	}
}
