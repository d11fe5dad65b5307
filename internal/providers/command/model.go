package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ask-cli/ask/internal/providers"
)

// Errors a command model fails with; both wrap the one-line description.
var (
	// ErrNotFound: the shell could not find or run the program.
	ErrNotFound = errors.New("command not found")
	// ErrFailed: the program ran and failed, or printed nothing.
	ErrFailed = errors.New("command failed")
)

// waitDelay bounds how long a finished or killed command's leftover
// children may hold its output open.
const waitDelay = 2 * time.Second

// Model runs a command once per step: the conversation, rendered by
// Render, on its stdin, and its cleaned stdout as the reply. It implements
// the loop's Model interface.
type Model struct {
	// Command is run with /bin/sh -c, so it may hold arguments, quotes,
	// pipes and variables: `ollama run qwen3`, `llm -m gpt-4o-mini`.
	Command string
	// Protocol renders requests and reads replies: the text tool protocol
	// over Plain.
	Protocol providers.Protocol
	// Model is the name put in the request; a command may ignore it.
	Model string
	// Dir is where the command runs; empty means the current directory.
	Dir string
	// Env is the command's environment; nil inherits ask's own. The caller
	// chooses: the user named the command, and tools like `llm` need their
	// own API key.
	Env []string
	// Timeout bounds one step; 0 leaves only the context's deadline.
	Timeout time.Duration
}

// CurrentProtocol returns m.Protocol, for the loop's Model.
func (m *Model) CurrentProtocol() providers.Protocol { return m.Protocol }

// Call implements the loop's Model: one step is one run of the command.
func (m *Model) Call(ctx context.Context, req providers.Request, h providers.Hooks) (*providers.Turn, error) {
	if req.Model == "" {
		req.Model = m.Model
	}
	body, err := m.Protocol.BuildRequest(req)
	if err != nil {
		return nil, fmt.Errorf("command: build request: %w", err)
	}
	prompt, err := Render(body)
	if err != nil {
		return nil, err
	}
	if h.OnRequest != nil {
		h.OnRequest("command: "+m.Command, nil, body)
	}
	out, err := m.run(ctx, prompt)
	if err != nil {
		return nil, err
	}
	reply := Clean(out)
	if h.OnResponse != nil {
		h.OnResponse(0, nil, []byte(reply))
	}
	if strings.TrimSpace(reply) == "" {
		return nil, fmt.Errorf("%w: `%s` printed nothing on stdout", ErrFailed, m.Command)
	}
	turn, err := providers.ParseResponse(m.Protocol, []byte(reply))
	if err != nil {
		return nil, fmt.Errorf("command: %w", err)
	}
	if h.OnDelta != nil && turn.Text != "" {
		h.OnDelta(turn.Text)
	}
	return turn, nil
}

// run starts the command in its own process group, so that a timeout or
// Ctrl-C ends the model runner and everything it started.
func (m *Model) run(ctx context.Context, stdin string) ([]byte, error) {
	if strings.TrimSpace(m.Command) == "" {
		return nil, fmt.Errorf("%w: no command given (use --command 'ollama run MODEL')", ErrNotFound)
	}
	runCtx := ctx
	if m.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, m.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(runCtx, "/bin/sh", "-c", m.Command)
	cmd.Dir = m.Dir
	cmd.Env = m.Env
	cmd.Stdin = strings.NewReader(stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	stdout, stderr, err := runPiped(cmd)
	if cause := context.Cause(ctx); cause != nil {
		return nil, cause // the run's timeout or an interruption, told apart by the loop
	}
	if runCtx.Err() != nil {
		return nil, fmt.Errorf("%w: `%s` did not answer within %s", ErrFailed, m.Command, m.Timeout)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code := exit.ExitCode()
		if code == 126 || code == 127 {
			return nil, fmt.Errorf("%w: `%s` (exit %d): %s", ErrNotFound, m.Command, code, lastLines(string(stderr)))
		}
		return nil, fmt.Errorf("%w: `%s` exited with status %d: %s", ErrFailed, m.Command, code, lastLines(string(stderr)))
	case err != nil && !errors.Is(err, exec.ErrWaitDelay): // a leftover child kept stdin open: the command itself succeeded
		return nil, fmt.Errorf("%w: `%s`: %v", ErrFailed, m.Command, err)
	}
	return stdout, nil
}

// runPiped runs cmd with its output on pipes of our own, rather than
// exec's, so that Wait returns as soon as the shell exits; the rest of its
// process group (a model server it spawned, a stray background job) is then
// killed, which closes the pipes.
func runPiped(cmd *exec.Cmd) (stdout, stderr []byte, err error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return nil, nil, err
	}
	defer errR.Close()
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		return nil, nil, err
	}
	var outBuf, errBuf bytes.Buffer
	var copying sync.WaitGroup
	copying.Go(func() { io.Copy(&outBuf, outR) })
	copying.Go(func() { io.Copy(&errBuf, errR) })
	err = cmd.Wait()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	done := make(chan struct{})
	go func() { copying.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitDelay): // a child that left the group still holds a pipe
		outR.Close()
		errR.Close()
		<-done
	}
	return outBuf.Bytes(), errBuf.Bytes(), err
}

// lastLines keeps the end of a command's stderr, cleaned, on one line:
// where programs say what went wrong.
func lastLines(stderr string) string {
	s := strings.Join(strings.Fields(Clean([]byte(stderr))), " ")
	if s == "" {
		return "no message on stderr"
	}
	if r := []rune(s); len(r) > 300 {
		s = "…" + string(r[len(r)-300:])
	}
	return s
}
