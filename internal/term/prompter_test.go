package term

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

// approvalTool is a tool that only describes itself, for the policy.
type approvalTool struct{ info tools.Info }

func (a approvalTool) Info() tools.Info                                     { return a.info }
func (a approvalTool) Run(context.Context, json.RawMessage) (string, error) { return "", nil }

// gatedTools need a person's approval.
var gatedTools = []tools.Tool{
	approvalTool{tools.Info{Name: "shell", Risk: tools.Exec, RequiresApproval: true}},
	approvalTool{tools.Info{Name: "deploy", Risk: tools.Exec, RequiresApproval: true}},
}

func pending(n int) []policy.Pending {
	calls := make([]policy.Pending, n)
	for i := range calls {
		calls[i] = policy.Pending{Name: "shell", Summary: fmt.Sprintf("cmd %d", i), Risk: tools.Exec, Always: "cmd"}
	}
	return calls
}

func TestTerminalPrompter(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		n         int
		want      []policy.Answer
		err       bool
		questions int // times "allow" was asked
	}{
		{"yes", "y\n", 1, []policy.Answer{policy.Yes}, false, 1},
		{"asked again after nonsense", "maybe\nn\n", 1, []policy.Answer{policy.No}, false, 2},
		{"always for the step", "a\n", 2, []policy.Answer{policy.Always, policy.Always}, false, 1},
		{"no for the step", "no\n", 2, []policy.Answer{policy.No, policy.No}, false, 1},
		{"one by one", "o\ny\nn\n", 2, []policy.Answer{policy.Yes, policy.No}, false, 3},
		{"a last line without a newline", "yes", 1, []policy.Answer{policy.Yes}, false, 1},
		{"end of input", "", 1, []policy.Answer{policy.No}, true, 1},
		// "o" is offered only at the question about several calls.
		{"o at a single call is asked again", "o\ny\n", 1, []policy.Answer{policy.Yes}, false, 2},
		{"o at a single call, then end of input", "o\n", 1, []policy.Answer{policy.No}, true, 2},
		{"o inside the one-by-one questions is asked again", "o\no\ny\no\nn\n", 2, []policy.Answer{policy.Yes, policy.No}, false, 5},
		{"o inside the one-by-one questions, then end of input", "o\ny\no\n", 2, []policy.Answer{policy.Yes, policy.No}, true, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			p := &Prompter{In: strings.NewReader(tt.input), Out: &out}
			defer p.Close()
			got, err := p.Approve(context.Background(), pending(tt.n))
			if (err != nil) != tt.err || fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%v, %v; want %v (error %v)", got, err, tt.want, tt.err)
			}
			for _, a := range got {
				if a == oneByOne {
					t.Errorf("the internal answer \"one by one\" left Approve: %v", got)
				}
			}
			if n := strings.Count(out.String(), "allow"); n != tt.questions {
				t.Errorf("asked %d times, want %d:\n%s", n, tt.questions, out.String())
			}
			if !strings.Contains(out.String(), "shell (exec) cmd 0") {
				t.Errorf("question does not show the call: %q", out.String())
			}
		})
	}
}

// "o" typed where it is not offered must never run a call: through Check,
// the calls are denied when the input ends, and run only on a later yes.
func TestOneByOneIsNeverApproval(t *testing.T) {
	call := []providers.ToolCall{{ID: "1", Name: "shell", Arguments: `{"command":"rm -rf ~"}`}}
	var out strings.Builder
	tp := &Prompter{In: strings.NewReader("o\n"), Out: &out}
	defer tp.Close()
	p := policy.New(policy.ModeAgent, false, false, nil, nil, tp, gatedTools)
	if v := p.Check(context.Background(), call); v[0].Allowed {
		t.Errorf("\"o\" at a single-call question ran the call: %+v", v)
	}

	two := []providers.ToolCall{call[0], {ID: "2", Name: "deploy", Arguments: `{}`}}
	tp2 := &Prompter{In: strings.NewReader("o\no\n"), Out: &out}
	defer tp2.Close()
	p = policy.New(policy.ModeAgent, false, false, nil, nil, tp2, gatedTools)
	if v := p.Check(context.Background(), two); v[0].Allowed || v[1].Allowed {
		t.Errorf("\"o\" inside the one-by-one questions ran a call: %+v", v)
	}
}

// cancelOnQuestion is a terminal's output that ends the context once a
// question containing mark has been written, so that the test knows the
// prompter is waiting for an answer.
type cancelOnQuestion struct {
	mu     sync.Mutex
	b      strings.Builder
	mark   string
	cancel func()
}

func (c *cancelOnQuestion) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b.Write(p)
	if c.cancel != nil && strings.Contains(c.b.String(), c.mark) {
		c.cancel()
		c.cancel = nil
	}
	return len(p), nil
}

// An open question gives up when the run's context ends (Ctrl-C, --timeout)
// with the context's cause, and the answer typed afterwards goes to the
// next question rather than to a read left behind.
func TestTerminalPrompterCancel(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out := &cancelOnQuestion{mark: "allow"}
	p := &Prompter{In: r, Out: out}

	for _, cause := range []error{loop.ErrInterrupted, loop.ErrTimeout} {
		ctx, cancel := context.WithCancelCause(context.Background())
		out.mu.Lock()
		out.b.Reset()
		out.cancel = func() { cancel(cause) }
		out.mu.Unlock()
		got, err := p.Approve(ctx, pending(1))
		if !errors.Is(err, cause) || len(got) != 1 || got[0] != policy.No {
			t.Fatalf("cancelled with %v: %v, %v; want policy.No and an error that is the cause", cause, got, err)
		}
		if !strings.HasSuffix(out.b.String(), "[a]lways cmd: \n") {
			t.Errorf("the unanswered question's line was not ended: %q", out.b.String())
		}
	}

	// Nothing was typed, so nothing was lost: these answers go to the next
	// questions, in order.
	if _, err := w.WriteString("y\nn\n"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []policy.Answer{policy.Yes, policy.No} {
		got, err := p.Approve(context.Background(), pending(1))
		if err != nil || len(got) != 1 || got[0] != want {
			t.Fatalf("after cancelled questions: %v, %v; want %v", got, err, want)
		}
	}

	// A context that has already ended asks nothing.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(loop.ErrInterrupted)
	out.b.Reset()
	if _, err := p.Approve(ctx, pending(1)); !errors.Is(err, loop.ErrInterrupted) || out.b.Len() != 0 {
		t.Errorf("ended context: %v, wrote %q", err, out.b.String())
	}

	// Close ends the reader goroutine: lines is closed when it returns.
	p.Close()
	r.Close()
	for range p.lines {
	}
	if _, err := p.Approve(context.Background(), pending(1)); err == nil {
		t.Error("a question after Close got an answer")
	}
}

// Cancelled during the one-by-one questions, every call of the step is
// denied, those already answered yes included, with the cause as reason.
func TestCheckCancelledMidway(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	if _, err := w.WriteString("o\ny\n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	tp := &Prompter{In: r, Out: &cancelOnQuestion{mark: "allow deploy", cancel: func() { cancel(loop.ErrInterrupted) }}}
	defer tp.Close()
	p := policy.New(policy.ModeAgent, false, false, nil, nil, tp, gatedTools)
	v := p.Check(ctx, []providers.ToolCall{
		{ID: "1", Name: "shell", Arguments: `{"command":"ls"}`},
		{ID: "2", Name: "deploy", Arguments: `{}`},
	})
	for _, x := range v {
		if x.Allowed || !strings.Contains(x.Reason, "interrupted") {
			t.Errorf("verdict %+v: want a denial naming the interruption", x)
		}
	}
}

// A model's command cannot dress itself up at the prompt: escape
// sequences that redraw the line, bidi overrides that reverse it and a run
// of spaces that pushes the rest out of sight are all shown for what they
// are, and the whole command is shown.
func TestPromptShowsTheCommandAsItIs(t *testing.T) {
	t.Parallel()
	hostile := []string{
		"touch PWN\r\x1b[2K\x1b[1Aallow shell (exec) git status",
		"git status" + strings.Repeat(" ", 200) + "; touch PWN",
		"echo \u202egnp.exe; touch PWN",
		"git status\n; touch PWN",
		"git status\xff; touch PWN",
		"git status \u2028; touch PWN",
		strings.Repeat("x", 500) + "; touch PWN",
	}
	for _, cmd := range hostile {
		var out strings.Builder
		p := &Prompter{In: strings.NewReader("n\n"), Out: &out}
		_, err := p.Approve(context.Background(), []policy.Pending{{Name: "shell", Summary: cmd, Risk: tools.Exec}})
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		shown := out.String()
		if !strings.Contains(shown, "touch PWN") {
			t.Errorf("%q: the prompt hides part of the command: %q", cmd, shown)
		}
		for _, r := range strings.TrimSuffix(shown, " ") {
			if r == '\x1b' || r == '\r' || r == '\u202e' || r == '\u2028' || r == utf8.RuneError {
				t.Errorf("%q: the prompt printed %U raw: %q", cmd, r, shown)
			}
		}
		if strings.Count(shown, "\n") > 0 {
			t.Errorf("%q: the question spans lines: %q", cmd, shown)
		}
	}
}

// "Always" is offered with what it approves, and not at all for a line
// that cannot be judged: an "a" typed there is asked again.
func TestAlwaysNamesWhatItApproves(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := &Prompter{In: strings.NewReader("a\n"), Out: &out}
	got, err := p.Approve(context.Background(), []policy.Pending{{Name: "shell", Summary: "go test ./...", Risk: tools.Exec, Always: "any go test"}})
	p.Close()
	if err != nil || got[0] != policy.Always || !strings.Contains(out.String(), "[a]lways any go test: ") {
		t.Errorf("%v %v, question %q", got, err, out.String())
	}

	out.Reset()
	p = &Prompter{In: strings.NewReader("a\ny\n"), Out: &out}
	got, err = p.Approve(context.Background(), []policy.Pending{{Name: "shell", Summary: "eval $x", Risk: tools.Exec}})
	p.Close()
	if err != nil || got[0] != policy.Yes || strings.Contains(out.String(), "[a]") || strings.Count(out.String(), "allow") != 2 {
		t.Errorf("%v %v, questions %q: want no [a] offered and the a asked again", got, err, out.String())
	}
}

// The approval question starts on a line of its own, whatever the model's
// text before it left on the terminal, and the text after the answer
// follows on the next line, with no blank line between (issue 30).
func TestQuestionStartsOnItsOwnLine(t *testing.T) {
	t.Parallel()
	const question = "ask: allow shell (exec) rm -rf build? [y]es [n]o [a]lways any rm: "
	tests := []struct {
		name   string
		before string // the model's text streamed before its call
		want   string // the screen; the typed answer's echo is the terminal's
	}{
		{"text without its newline", "I will clean up first.", "I will clean up first.\n" + question + "Done."},
		{"text ending its line", "I will clean up first.\n", "I will clean up first.\n" + question + "Done."},
		{"no text", "", question + "Done."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var screen strings.Builder // stdout and /dev/tty are one terminal
			status := NewStatusLine(io.Discard, false, Palette{}, 80)
			answer := NewAnswer(&screen, status)
			tp := &Prompter{In: strings.NewReader("y\n"), Out: &screen}
			defer tp.Close()
			p := HoldWhileAsking(status, tp)
			answer.Step(1)
			answer.Text(tt.before)
			got, err := p.Approve(context.Background(), []policy.Pending{{Name: "shell", Summary: "rm -rf build", Risk: tools.Exec, Always: "any rm"}})
			if err != nil || got[0] != policy.Yes {
				t.Fatalf("%v %v", got, err)
			}
			answer.Step(2)
			answer.Text("Done.")
			if screen.String() != tt.want {
				t.Errorf("screen %q\nwant   %q", screen.String(), tt.want)
			}
		})
	}
}
