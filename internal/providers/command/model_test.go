package command

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/textproto"
)

// fakeModel returns a Model that runs testdata/fakemodel.sh, answering step
// N with replies[N-1], and the file its stdin is logged to.
func fakeModel(t *testing.T, tools []providers.Tool, replies ...string) (*Model, string) {
	t.Helper()
	dir := t.TempDir()
	for i, r := range replies {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i+1)+".txt"), []byte(r), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("testdata/fakemodel.sh")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "stdin.log")
	return &Model{
		Command:  "sh " + script,
		Protocol: textproto.Wrap(Plain{}, textproto.JSON, tools),
		Model:    "fake",
		Dir:      t.TempDir(),
		Env:      []string{"PATH=" + os.Getenv("PATH"), "FAKE_REPLIES=" + dir, "FAKE_LOG=" + log},
	}, log
}

var tools = []providers.Tool{
	{Name: "read_file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
}

type toolbox struct{ calls []string }

func (b *toolbox) Call(_ context.Context, name, args string) (string, bool) {
	b.calls = append(b.calls, name+" "+args)
	return "1: module example.com/x", false
}

func runLoop(t *testing.T, m *Model) (*loop.Result, *toolbox) {
	t.Helper()
	box := &toolbox{}
	res := loop.Run(context.Background(), loop.Config{Model: m, System: "You are ask.",
		Prompt: "what module is this?", Tools: tools, Toolbox: box})
	return res, box
}

func TestLoopWithCommand(t *testing.T) {
	m, log := fakeModel(t, tools,
		// A spinner, as a model runner draws it, before the reply.
		"\x1b[?25l⠋ \x1b[2K\x1b[1G⠙ \x1b[2K\x1b[1G\x1b[?25hI'll read go.mod.\n{\"tool\": \"read_file\", \"parameters\": {\"path\": \"go.mod\"}, \"terminate\": false}\n",
		"The module is example.com/x.\n")
	res, box := runLoop(t, m)
	if res.Status != loop.StatusCompleted || res.Answer != "The module is example.com/x." || res.Steps != 2 {
		t.Fatalf("result %+v", res)
	}
	if len(box.calls) != 1 || box.calls[0] != `read_file {"path": "go.mod"}` {
		t.Errorf("calls %q", box.calls)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	steps := strings.Split(string(b), "\n=====\n")
	second := steps[1]
	for _, want := range []string{"[system]\nYou are ask.\n\n# Tools\n", "[user]\nwhat module is this?\n\n[assistant]\nI'll read go.mod.\n{\"tool\"",
		"[user]\n<tool_result call=\"1\" tool=\"read_file\">\n1: module example.com/x\n</tool_result>\n\n[assistant]"} {
		if !strings.Contains(second, want) {
			t.Errorf("stdin of step 2 lacks %q:\n%s", want, second)
		}
	}
}

func TestLoopWithCommandStopsAfterThreeUnreadableReplies(t *testing.T) {
	m, _ := fakeModel(t, tools, `{"tool": "read_file"}`, `{"tool": "read_file", "parameters": {"path": 1}}`, "<tool_call>\n", "unused")
	res, box := runLoop(t, m)
	if res.Status != loop.StatusParseFailures || res.Steps != 3 || len(box.calls) != 0 {
		t.Fatalf("result %+v", res)
	}
}

func TestLoopWithCommandTerminate(t *testing.T) {
	m, _ := fakeModel(t, tools, `{"tool": "read_file", "parameters": {"path": "go.mod"}, "terminate": true}`)
	res, box := runLoop(t, m)
	if res.Status != loop.StatusCompleted || res.Steps != 1 || len(box.calls) != 1 || res.Answer != "1: module example.com/x" {
		t.Fatalf("result %+v", res)
	}
}

func TestCommandErrors(t *testing.T) {
	proto := textproto.Wrap(Plain{}, textproto.JSON, nil)
	tests := []struct {
		name, command string
		timeout       time.Duration
		want          error
		wantMsg       string
	}{
		{"missing program", "no-such-model-runner-xyz run m", 0, ErrNotFound, "not found"},
		{"fails", "echo 'model qwen9 not found, try ollama pull' >&2; exit 1", 0, ErrFailed, "exited with status 1: model qwen9 not found, try ollama pull"},
		{"prints nothing", "cat >/dev/null", 0, ErrFailed, "printed nothing"},
		{"too slow", "sleep 5", 200 * time.Millisecond, ErrFailed, "did not answer within 200ms"},
		{"empty command", " ", 0, ErrNotFound, "no command given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Model{Command: tt.command, Protocol: proto, Timeout: tt.timeout}
			start := time.Now()
			_, err := m.Call(context.Background(), providers.Request{}, providers.Hooks{})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.wantMsg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error = %v; want %v with %q on one line", err, tt.want, tt.wantMsg)
			}
			if time.Since(start) > 4*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
		})
	}
}

// Ending the run (Ctrl-C, --timeout) stops the command and reports the
// run's own cause.
func TestCommandStopsWithTheRun(t *testing.T) {
	m := &Model{Command: "sleep 30", Protocol: textproto.Wrap(Plain{}, textproto.JSON, nil)}
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(loop.ErrInterrupted) })
	start := time.Now()
	_, err := m.Call(ctx, providers.Request{}, providers.Hooks{})
	if !errors.Is(err, loop.ErrInterrupted) || time.Since(start) > 3*time.Second {
		t.Errorf("error %v after %s", err, time.Since(start))
	}
}

// A background job the command leaves behind does not hold the step.
func TestCommandLeftoverChildren(t *testing.T) {
	m := &Model{Command: "sleep 30 & echo answer", Protocol: textproto.Wrap(Plain{}, textproto.JSON, nil)}
	start := time.Now()
	turn, err := m.Call(context.Background(), providers.Request{}, providers.Hooks{})
	if err != nil || turn.Text != "answer" || time.Since(start) > 4*time.Second {
		t.Errorf("turn %+v, error %v after %s", turn, err, time.Since(start))
	}
}

// The hooks see the request and the cleaned reply, so that transcripts
// record command runs too.
func TestCommandHooks(t *testing.T) {
	m := &Model{Command: "cat >/dev/null; printf '\\033[1mhi\\033[0m'", Protocol: textproto.Wrap(Plain{}, textproto.JSON, nil)}
	var url, resp, delta string
	var reqBody []byte
	_, err := m.Call(context.Background(), providers.Request{System: "s"}, providers.Hooks{
		OnRequest:  func(u string, _ http.Header, b []byte) { url, reqBody = u, b },
		OnResponse: func(_ int, _ http.Header, b []byte) { resp = string(b) },
		OnDelta:    func(s string) { delta += s },
	})
	if err != nil || !strings.HasPrefix(url, "command: cat") || !strings.Contains(string(reqBody), `"system":"s"`) || resp != "hi" || delta != "hi" {
		t.Errorf("err %v url %q request %s response %q delta %q", err, url, reqBody, resp, delta)
	}
}
