package history

import (
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/records"
)

func TestDescribe(t *testing.T) {
	t.Parallel()
	e := Entry{ID: "20260101-120000-ab12", Time: time.Date(2026, 1, 1, 12, 0, 0, 0, time.Local), Workdir: "/src/app\x1b[2J",
		Provider: "openai", Model: "gpt-4.1", Prompt: "fix the build\n", Status: "completed", Answer: "done\x1b[31m\n", Path: "/state/ask/runs/x.jsonl"}
	events := []records.Event{
		{Type: records.TypeToolStarted, Step: 1, ID: "c1", Name: "read_file", Arguments: `{"path":"go.mod"}`},
		{Type: records.TypeToolFinished, Step: 1, ID: "c1"},
		{Type: records.TypeToolStarted, Step: 2, ID: "c2", Name: "bash", Arguments: `{"command":"go build"}`},
		{Type: records.TypeToolFinished, Step: 2, ID: "c2", IsError: true},
		{Type: records.TypeToolDenied, Step: 2, ID: "c3", Name: "bash", Arguments: `{"command":"rm -rf /"}`, Reason: "--safe refuses commands"},
	}
	for _, tt := range []struct {
		name   string
		entry  Entry
		events []records.Event
		want   string
	}{
		{"calls and answer", e, events, `run 20260101-120000-ab12, 2026-01-01 12:00:00, in /src/app\u001b[2J
openai gpt-4.1, status completed
transcript: /state/ask/runs/x.jsonl (ask replay it; ask --resume 20260101-120000-ab12 to continue)

prompt:
fix the build
  step 1: read_file {"path":"go.mod"}
  step 2: bash {"command":"go build"} (failed)
  step 2: bash {"command":"rm -rf /"} (refused: --safe refuses commands)

answer:
done\u001b[31m
`},
		{"no calls, no answer", Entry{ID: "r", Time: e.Time, Workdir: "/w", Provider: "command", Model: "m", Prompt: "hi", Status: "unfinished", Path: "p"}, nil,
			`run r, 2026-01-01 12:00:00, in /w
command m, status unfinished
transcript: p (ask replay it; ask --resume r to continue)

prompt:
hi
`},
		{"a parent and a child", Entry{ID: "c", Time: e.Time, Workdir: "/w", Provider: "openai", Model: "m", Prompt: "hi", Status: "completed", Path: "p", ParentID: "p1"},
			[]records.Event{{Type: records.TypeRunFinished, Children: []records.Child{{ID: "k1", Name: "review\x1b[2J", Status: "max_steps"}}}},
			`run c, 2026-01-01 12:00:00, in /w
openai m, status completed
a subagent of run p1
transcript: p (ask replay it; ask --resume c to continue)

prompt:
hi
  subagent review\u001b[2J: run k1, max_steps
`},
	} {
		var b strings.Builder
		Describe(&b, tt.entry, tt.events)
		if b.String() != tt.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", tt.name, b.String(), tt.want)
		}
	}
}
