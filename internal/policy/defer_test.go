package policy

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
)

// adviser gives every call the same advice.
type adviser struct{ advice Advice }

func (a adviser) Advise(_ context.Context, calls []providers.ToolCall) []Advice {
	out := make([]Advice, len(calls))
	for i := range out {
		out[i] = a.advice
	}
	return out
}

func TestDefer(t *testing.T) {
	t.Parallel()
	shell := func(line string) providers.ToolCall {
		return providers.ToolCall{ID: "c1", Name: "shell", Arguments: string(must(json.Marshal(map[string]string{"command": line})))}
	}
	write := providers.ToolCall{ID: "c2", Name: "edit_file", Arguments: `{"path":"a.txt","content":"x"}`}
	read := providers.ToolCall{ID: "c3", Name: "read_file", Arguments: `{"path":"a.txt"}`}
	tests := []struct {
		name      string
		call      providers.ToolCall
		setup     func(p *Policy)
		want      string // run, deny, defer, ask
		wantAsked bool
	}{
		{name: "a defer rule defers even what --yes allows", call: shell("go test ./..."),
			setup: func(p *Policy) { p.Yes, p.Defer = true, mustPatterns(t, "shell:go test*") }, want: "defer"},
		{name: "a defer rule on one command of a line defers the line", call: shell("ls && go test"),
			setup: func(p *Policy) { p.Defer = mustPatterns(t, "shell:go test*") }, want: "defer"},
		{name: "a line no rule can judge is deferred by a rule naming its tool", call: shell("$(echo go) test"),
			setup: func(p *Policy) { p.Defer = mustPatterns(t, "shell:go test*") }, want: "defer"},
		{name: "a defer rule that does not match leaves the call alone", call: shell("ls"),
			setup: func(p *Policy) { p.Yes, p.Defer = true, mustPatterns(t, "shell:go test*") }, want: "run"},
		{name: "a deny rule wins over a defer rule", call: shell("go test"),
			setup: func(p *Policy) {
				p.Defer, p.Deny = mustPatterns(t, "shell"), mustPatterns(t, "shell:go*")
			}, want: "deny"},
		{name: "--safe wins over a defer rule", call: write,
			setup: func(p *Policy) { p.Safe, p.Defer = true, mustPatterns(t, "edit_file") }, want: "deny"},
		{name: "ask mode wins over a defer rule", call: write,
			setup: func(p *Policy) { p.Mode, p.Defer = ModeAsk, mustPatterns(t, "edit_file") }, want: "deny"},
		{name: "a hook's defer defers what an allow rule allows", call: shell("ls"),
			setup: func(p *Policy) {
				p.Allow, p.Advisor = mustPatterns(t, "shell"), adviser{Advice{Decision: AdviseDefer, Reason: "wait for review"}}
			}, want: "defer"},
		{name: "a hook's defer does not beat a deny rule", call: shell("ls"),
			setup: func(p *Policy) {
				p.Deny, p.Advisor = mustPatterns(t, "shell"), adviser{Advice{Decision: AdviseDefer}}
			}, want: "deny"},
		{name: "a hook's defer holds while resolving", call: shell("ls"),
			setup: func(p *Policy) {
				p.Resolving, p.Advisor = true, adviser{Advice{Decision: AdviseDefer}}
				p.Prompter = &scripted{answer: Yes}
			}, want: "defer"},
		{name: "--on-approval defer defers a call that needs approval without a terminal", call: write,
			setup: func(p *Policy) { p.DeferUndecided = true }, want: "defer"},
		{name: "--on-approval defer leaves a free call alone", call: read,
			setup: func(p *Policy) { p.DeferUndecided = true }, want: "run"},
		{name: "--on-approval defer does not defer what --yes allows", call: write,
			setup: func(p *Policy) { p.DeferUndecided, p.Yes = true, true }, want: "run"},
		{name: "without --on-approval defer the call is denied", call: write, want: "deny"},
		{name: "resolving, a defer rule's call goes to the prompter", call: shell("go test"),
			setup: func(p *Policy) {
				p.Resolving, p.Defer, p.Prompter = true, mustPatterns(t, "shell"), &scripted{answer: Yes}
			}, want: "run", wantAsked: true},
		{name: "resolving, the prompter's Later defers again", call: shell("go test"),
			setup: func(p *Policy) {
				p.Resolving, p.Defer, p.Prompter = true, mustPatterns(t, "shell"), &scripted{answer: Later}
			}, want: "defer", wantAsked: true},
		{name: "resolving, --yes does not pass a defer rule without the prompter", call: shell("go test"),
			setup: func(p *Policy) { p.Resolving, p.Yes, p.Defer = true, true, mustPatterns(t, "shell") }, want: "deny"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := New(ModeAgent, false, false, nil, nil, nil, matrix)
			if tt.setup != nil {
				tt.setup(p)
			}
			v := p.Check(context.Background(), []providers.ToolCall{tt.call})[0]
			got := "deny"
			switch {
			case v.Deferred && v.Allowed:
				t.Fatalf("verdict both deferred and allowed: %+v", v)
			case v.Deferred:
				got = "defer"
				if v.Reason == "" {
					t.Errorf("a deferral without a reason: %+v", v)
				}
			case v.Allowed:
				got = "run"
			}
			if got != tt.want {
				t.Errorf("verdict %+v: got %s, want %s", v, got, tt.want)
			}
			if s, ok := p.Prompter.(*scripted); ok && (s.asked > 0) != tt.wantAsked {
				t.Errorf("asked the prompter %d times, want asked=%t", s.asked, tt.wantAsked)
			}
		})
	}
}

func mustPatterns(t *testing.T, raw ...string) []Pattern {
	t.Helper()
	ps, err := ParsePatterns(raw)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
