package loop_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/records"
)

const citySchema = `{"type":"object","properties":{"city":{"type":"string"},"pop":{"type":"integer"}},"required":["city","pop"]}`

func TestSchemaRetries(t *testing.T) {
	tests := []struct {
		name       string
		replies    []fakeprovider.Reply
		wantStatus string
		wantAnswer string
		wantSteps  int
		// wantRetries are substrings of the retry message each follow-up
		// request ends with.
		wantRetries []string
	}{
		{
			name:       "valid the first time",
			replies:    []fakeprovider.Reply{text(`{"city":"Oslo","pop":700000}`)},
			wantStatus: loop.StatusCompleted, wantAnswer: `{"city":"Oslo","pop":700000}`, wantSteps: 1,
		},
		{
			name:       "fenced answer is unwrapped",
			replies:    []fakeprovider.Reply{text("```json\n{\"city\":\"Oslo\",\"pop\":1}\n```")},
			wantStatus: loop.StatusCompleted, wantAnswer: `{"city":"Oslo","pop":1}`, wantSteps: 1,
		},
		{
			name:       "invalid then valid",
			replies:    []fakeprovider.Reply{text(`{"city":"Oslo","pop":"many"}`), text(`{"city":"Oslo","pop":700000}`)},
			wantStatus: loop.StatusCompleted, wantAnswer: `{"city":"Oslo","pop":700000}`, wantSteps: 2,
			wantRetries: []string{`at /properties/pop: type: many has type "string", want "integer"`},
		},
		{
			name:       "prose, then wrong, then valid",
			replies:    []fakeprovider.Reply{text("Oslo, about 700k"), text(`{"city":"Oslo"}`), text(`{"city":"Oslo","pop":1}`)},
			wantStatus: loop.StatusCompleted, wantAnswer: `{"city":"Oslo","pop":1}`, wantSteps: 3,
			wantRetries: []string{"not one JSON value", `missing properties: ["pop"]`},
		},
		{
			name:       "never valid",
			replies:    []fakeprovider.Reply{text("no"), text("still no"), text(`{"city":1}`), text(`{"city":"never asked"}`)},
			wantStatus: loop.StatusSchemaFailed, wantAnswer: `{"city":1}`, wantSteps: 3,
			wantRetries: []string{"not one JSON value", "not one JSON value"},
		},
		{
			name: "tool call, then invalid, then valid",
			replies: []fakeprovider.Reply{calls(call("c1", "read_file", `{"path":"x"}`)), text(`{"city":"Oslo","pop":1.5}`),
				text(`{"city":"Oslo","pop":2}`)},
			wantStatus: loop.StatusCompleted, wantAnswer: `{"city":"Oslo","pop":2}`, wantSteps: 3,
			wantRetries: []string{"", `at /properties/pop: type: 1.5 has type "number", want "integer"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runLoop(t, context.Background(), &fakeTools{}, loop.Config{Schema: json.RawMessage(citySchema)}, tt.replies...)
			if r.res.Status != tt.wantStatus || r.res.Answer != tt.wantAnswer || r.res.Steps != tt.wantSteps {
				t.Fatalf("status %s answer %q steps %d (err %v), want %s %q %d",
					r.res.Status, r.res.Answer, r.res.Steps, r.res.Err, tt.wantStatus, tt.wantAnswer, tt.wantSteps)
			}
			reqs := r.srv.Requests()
			for i, body := range reqs {
				if got := gjson.GetBytes(body, "response_format.json_schema.schema.required.1").String(); got != "pop" {
					t.Errorf("request %d does not carry the schema: %s", i+1, body)
				}
			}
			for i, want := range tt.wantRetries {
				if want == "" {
					continue
				}
				msgs := gjson.GetBytes(reqs[i+1], "messages").Array()
				last := msgs[len(msgs)-1]
				if last.Get("role").String() != "user" || !strings.Contains(last.Get("content").String(), want) {
					t.Errorf("request %d ends with %s, want a retry mentioning %q", i+2, last.Raw, want)
				}
			}
			if tt.wantStatus == loop.StatusSchemaFailed {
				if r.res.Err == nil || !strings.Contains(r.res.Err.Error(), "after 3 attempts") || !strings.Contains(r.res.Err.Error(), "at /properties/city") {
					t.Errorf("Err = %v, want the attempts and the last problem", r.res.Err)
				}
				if len(reqs) != 3 {
					t.Errorf("%d requests, want 3 (two retries)", len(reqs))
				}
			}
		})
	}
}

func TestSchemaRetriesKeepToTheStepLimit(t *testing.T) {
	r := runLoop(t, context.Background(), &fakeTools{}, loop.Config{Schema: json.RawMessage(citySchema), MaxSteps: 2},
		calls(call("c1", "read_file", `{"path":"x"}`)), text(`{"city":"Oslo"}`), text(`{"city":"Oslo","pop":1}`))
	if r.res.Status != loop.StatusSchemaFailed || r.res.Steps != 2 || r.res.Err == nil || !strings.Contains(r.res.Err.Error(), "step limit (2)") {
		t.Fatalf("status %s steps %d err %v", r.res.Status, r.res.Steps, r.res.Err)
	}
	if n := len(r.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (--max-steps)", n)
	}
}

func TestInvalidSchemaFailsTheRun(t *testing.T) {
	r := runLoop(t, context.Background(), &fakeTools{}, loop.Config{Schema: json.RawMessage(`{"type":"strin"}`)}, text("x"))
	if r.res.Status != loop.StatusError || r.res.Err == nil || !strings.Contains(r.res.Err.Error(), "answer schema") {
		t.Fatalf("status %s err %v", r.res.Status, r.res.Err)
	}
	if n := len(r.srv.Requests()); n != 0 {
		t.Errorf("%d requests sent with an invalid schema", n)
	}
}

func TestUsagePerStep(t *testing.T) {
	r := runLoop(t, context.Background(), &fakeTools{}, loop.Config{},
		calls(call("c1", "read_file", `{"path":"a"}`)), text("done"))
	want := []records.StepUsage{{Step: 1}, {Step: 2}}
	if len(r.res.UsagePerStep) != len(want) {
		t.Fatalf("UsagePerStep = %+v", r.res.UsagePerStep)
	}
	total := 0
	for i, u := range r.res.UsagePerStep {
		if u.Step != want[i].Step || u.InputTokens != 100 || u.OutputTokens != 20 || u.TotalTokens != 120 {
			t.Errorf("step usage %d = %+v", i, u)
		}
		total += u.TotalTokens
	}
	if total != r.res.Usage.TotalTokens {
		t.Errorf("steps add to %d, total is %d", total, r.res.Usage.TotalTokens)
	}
}

// TestHistoryAnswersEveryCall checks that a run stopped with calls pending
// leaves a history whose every call has a result, so that it can be
// continued.
func TestHistoryAnswersEveryCall(t *testing.T) {
	r := runLoop(t, context.Background(), &fakeTools{}, loop.Config{MaxSteps: 1},
		calls(call("c1", "read_file", `{"path":"a"}`), call("c2", "read_file", `{"path":"b"}`)))
	if r.res.Status != loop.StatusMaxSteps {
		t.Fatalf("status %s", r.res.Status)
	}
	h := r.res.History
	if len(h) != 4 {
		t.Fatalf("history has %d messages, want user, assistant and two results: %s", len(h), h)
	}
	for i, id := range []string{"c1", "c2"} {
		m := gjson.ParseBytes(h[2+i])
		if m.Get("role").String() != "tool" || m.Get("tool_call_id").String() != id || !strings.Contains(m.Get("content").String(), "step limit") {
			t.Errorf("history[%d] = %s", 2+i, h[2+i])
		}
	}
}
