package term

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/term/termtest"
)

func TestStatusText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		p       loop.Progress
		width   int
		elapsed time.Duration
		want    string
	}{
		{"waiting for the model", loop.Progress{Step: 1, MaxSteps: 8}, 80, 300 * time.Millisecond, "· step 1/8 · thinking · 0.3s"},
		{"a tool with its arguments", loop.Progress{Step: 2, MaxSteps: 8, Tool: "read_file", Arguments: `{"path":"go.mod"}`}, 80, 3200 * time.Millisecond,
			"· step 2/8 · read_file go.mod · 3.2s"},
		{"a command", loop.Progress{Step: 3, MaxSteps: 12, Tool: "shell", Arguments: `{"command":"go test\n./...","timeout":30}`}, 80, 65 * time.Second,
			"· step 3/12 · shell go test ./... timeout=30 · 1m05s"},
		{"cut to the width", loop.Progress{Step: 1, MaxSteps: 8, Tool: "write_file", Arguments: `{"path":"` + strings.Repeat("a", 100) + `"}`}, 40, time.Second,
			"· step 1/8 · write_file aaaaaaa… · 1.0s"},
	}
	for _, tt := range tests {
		s := &StatusLine{width: tt.width, last: tt.p}
		got := s.text(tt.elapsed)
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if n := len([]rune(got)); n >= tt.width {
			t.Errorf("%s: %d runes on a terminal %d wide", tt.name, n, tt.width)
		}
	}
}

func TestShortArgs(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		`{"path":"a.txt"}`:                  "a.txt",
		`{"path":"a.txt","offset":3}`:       "a.txt offset=3",
		`{"command":"ls  -la\n"}`:           "ls -la",
		`{"x":{"y":1}}`:                     `x={"y":1}`,
		`not json at all`:                   "not json at all",
		``:                                  "",
		`{"a":"one","b":true,"c":"two"}`:    "one b=true two",
		`{"pattern":"TODO","path":"./src"}`: "TODO ./src",
	}
	for in, want := range tests {
		if got := shortArgs(in); got != want {
			t.Errorf("shortArgs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStatusLineTicksUntilCleared(t *testing.T) {
	t.Parallel()
	var w termtest.Buffer
	s := NewStatusLine(&w, true, Palette{}, 80)
	s.every = 2 * time.Millisecond
	s.Progress(loop.Progress{Step: 1, MaxSteps: 8})
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(w.String(), "step 1/8") < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := strings.Count(w.String(), "step 1/8"); n < 3 {
		t.Fatalf("the line was drawn %d times; the ticker should redraw it", n)
	}
	s.Clear()
	after := w.String()
	if !strings.HasSuffix(after, "\r\033[K") {
		t.Errorf("clear did not erase the line: %q", after[max(0, len(after)-20):])
	}
	time.Sleep(20 * s.every)
	if w.String() != after {
		t.Errorf("the ticker drew after clear")
	}
}

func TestStatusLineGoesBelowUnfinishedText(t *testing.T) {
	t.Parallel()
	var w termtest.Buffer
	s := NewStatusLine(&w, true, Palette{}, 80)
	s.Wrote("Let me look")
	s.Progress(loop.Progress{Step: 1, MaxSteps: 8, Tool: "list_directory", Arguments: `{"path":"."}`})
	s.Clear()
	if got := w.String(); !strings.HasPrefix(got, "\n\r\033[K· step 1/8 · list_directory . · ") {
		t.Errorf("stderr %q: the status must start below the unfinished line", got)
	}
	var w2 termtest.Buffer
	s2 := NewStatusLine(&w2, true, Palette{}, 80)
	s2.Wrote("a whole line\n")
	s2.Progress(loop.Progress{Step: 1, MaxSteps: 8})
	s2.Clear()
	if strings.HasPrefix(w2.String(), "\n") {
		t.Errorf("a newline after a finished line: %q", w2.String())
	}
}

func TestStatusLineOff(t *testing.T) {
	t.Parallel()
	var w termtest.Buffer
	s := NewStatusLine(&w, false, Palette{}, 80)
	s.Wrote("x")
	s.Progress(loop.Progress{Step: 1, MaxSteps: 8})
	s.Clear()
	if w.String() != "" {
		t.Errorf("an off status line wrote %q", w.String())
	}
}

// questionPrompter stands in for the terminal prompter: while its question
// is open it lets the status line tick and move on, and records what
// stderr showed.
type questionPrompter struct {
	stderr  *termtest.Buffer
	status  *StatusLine
	atAsk   string // stderr when the question opened
	duringQ string // what stderr gained while it was open
}

func (q *questionPrompter) Approve(_ context.Context, calls []policy.Pending) ([]policy.Answer, error) {
	q.atAsk = q.stderr.String()
	q.status.redraw() // the ticker's turn
	q.status.Progress(loop.Progress{Step: 2, MaxSteps: 8, Tool: "shell", Arguments: `{"command":"make"}`})
	q.duringQ = strings.TrimPrefix(q.stderr.String(), q.atAsk)
	return []policy.Answer{policy.Yes}, nil
}

// While an approval question is open the status line is off the terminal
// (its redraw starts with "\r\033[K", which would erase the question), and
// it comes back, up to date, after the answer.
func TestStatusLineHeldWhileAsking(t *testing.T) {
	t.Parallel()
	var w termtest.Buffer
	q := &questionPrompter{stderr: &w}
	status := NewStatusLine(&w, true, Palette{}, 80) // as a run's on a terminal stderr
	prompter := HoldWhileAsking(status, q)
	status.every = time.Hour // ticks come from the test, through redraw
	q.status = status

	status.Progress(loop.Progress{Step: 1, MaxSteps: 8})
	answers, err := prompter.Approve(context.Background(), []policy.Pending{{Name: "shell"}})
	if err != nil || len(answers) != 1 || answers[0] != policy.Yes {
		t.Fatalf("the wrapper changed the answer: %v, %v", answers, err)
	}
	if !strings.Contains(q.atAsk, "step 1/8") || !strings.HasSuffix(q.atAsk, "\r\033[K") {
		t.Errorf("stderr when the question opened: %q; want the status line erased", q.atAsk)
	}
	if q.duringQ != "" {
		t.Errorf("the status line wrote %q while the question was open", q.duringQ)
	}
	after := strings.TrimPrefix(w.String(), q.atAsk)
	if !strings.HasPrefix(after, "\r\033[K") || !strings.Contains(after, "step 2/8 · shell make") {
		t.Errorf("after the answer stderr gained %q; want the latest status drawn again", after)
	}
	if !status.redraw() {
		t.Error("the ticker stopped after the question; the line is shown again and should tick")
	}

	// A line cleared before the question stays cleared after it.
	status.Clear()
	q.status = &StatusLine{} // off: nothing to tick
	before := w.String()
	prompter.Approve(context.Background(), []policy.Pending{{Name: "shell"}})
	if got := strings.TrimPrefix(w.String(), before); got != "" {
		t.Errorf("a question with no status line shown wrote %q", got)
	}

	// stderr still reaches the terminal around the questions.
	fmt.Fprint(&w, "ask: note\n")
	if !strings.HasSuffix(w.String(), "ask: note\n") {
		t.Errorf("stderr writes are lost: %q", w.String())
	}
}

// The status line shows a model's arguments, but nothing in them can
// redraw the terminal.
func TestStatusLineEscapesTheModelsText(t *testing.T) {
	t.Parallel()
	s := NewStatusLine(io.Discard, true, Palette{}, 80)
	s.last = loop.Progress{Step: 1, MaxSteps: 8, Tool: "shell", Arguments: `{"command":"ls\r\u001b[2Kgit status"}`}
	if got := s.text(time.Second); strings.ContainsAny(got, "\r\x1b") || !strings.Contains(got, `\u001b[2Kgit status`) {
		t.Errorf("status line %q", got)
	}
}

// The line says which MCP servers a run waits for, until they are up or
// the first step replaces it.
func TestStatusMCPStarting(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		starting []string
		width    int
		want     string
	}{
		{[]string{"memory", "fs"}, 80, "· starting MCP servers memory, fs · 1.2s"},
		{[]string{strings.Repeat("m", 40)}, 40, "· starting MCP server mmmmmmmmm… · 1.2s"},
	} {
		s := &StatusLine{width: tt.width, starting: tt.starting}
		if got := s.text(1200 * time.Millisecond); got != tt.want || len([]rune(got)) >= tt.width {
			t.Errorf("text = %q, want %q within %d", got, tt.want, tt.width)
		}
	}
	var b strings.Builder
	s := NewStatusLine(&b, true, Palette{}, 80)
	s.every = time.Hour
	s.MCPStarting([]string{"memory", "fs"})
	if !strings.Contains(b.String(), "starting MCP servers memory, fs") {
		t.Errorf("shown %q", b.String())
	}
	s.MCPStarting([]string{"fs"})
	if !strings.HasSuffix(strings.TrimRight(b.String(), "0123456789.s"), "starting MCP server fs · ") {
		t.Errorf("after one is up %q", b.String())
	}
	s.MCPStarting(nil)
	if !strings.HasSuffix(b.String(), "\r\033[K") {
		t.Errorf("not cleared: %q", b.String())
	}
	s.MCPStarting([]string{"fs"})
	s.Progress(loop.Progress{Step: 1, MaxSteps: 8})
	if !strings.Contains(b.String()[strings.LastIndex(b.String(), "\r"):], "step 1/8") {
		t.Errorf("the first step did not replace it: %q", b.String())
	}
	s.Clear()
}

// A note written during the run (a check's line, a Stop hook's) starts on
// a line of its own below answer text streamed without its newline, and
// the answer's end then needs none (issue 38, A7).
func TestNoteStartsBelowTheAnswer(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		var screen strings.Builder
		s := NewStatusLine(&screen, on, Palette{}, 80)
		answer := NewAnswer(&screen, s)
		answer.Text("All tests pass.")
		io.WriteString(s.Above(&screen), "ask: check 1/3: go test ./... passed, 0.4s\n")
		if got, want := screen.String(), "All tests pass.\nask: check 1/3"; !strings.HasPrefix(got, want) {
			t.Errorf("status on %v: %q, want it to start %q", on, got, want)
		}
		if !s.EndedLine() && on {
			t.Errorf("status on: the answer's line was ended, but EndedLine says not")
		}
	}
}

// A note quoting a hook's or a server's words shows their escape
// sequences and bidi overrides, never sends them (issue 37, item 7).
func TestNotesAreEscaped(t *testing.T) {
	t.Parallel()
	var screen strings.Builder
	s := NewStatusLine(&screen, false, Palette{}, 80)
	io.WriteString(s.Above(&screen), "ask: warning: PreToolUse hook failed: \x1b]52;c;eA==\x07 \u202eevil\tok\n")
	if got, want := screen.String(), "ask: warning: PreToolUse hook failed: \\u001b]52;c;eA==\\u0007 \\u202eevil\tok\n"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
