package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// A command's own limit (DESIGN §5): long enough for most test
	// suites, longer on the model's request, never past the run's.
	shellDefaultTimeout = 2 * time.Minute
	shellMaxTimeout     = 10 * time.Minute
	// Each of stdout and stderr keeps its first shellHead and last shellTail
	// bytes.
	shellHead = 10 << 10
	shellTail = 20 << 10
	// pipeGrace bounds the wait for output after the command and its process
	// group are gone (a daemon that left the group may still hold the pipes).
	pipeGrace = 2 * time.Second
)

type shell struct{ root *Root }

func (t shell) Info() Info {
	return Info{
		Name:        "shell",
		Description: "Run a command with /bin/sh -c in the working directory; returns exit code, stdout and stderr (long output keeps head and tail).",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","pattern":"\\S"},` +
			`"timeout_seconds":{"type":"integer","minimum":1,"description":"default 120, max 600"}},` +
			`"required":["command"]}`),
		Risk: Exec,
		// Any command at all can run: a person approves it, or --yes or an
		// --allow-tool pattern does.
		RequiresApproval: true,
		Sandboxed:        t.root.sandboxed(),
	}
}

func (t shell) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Command        string `json:"command"`
		TimeoutSeconds optInt `json:"timeout_seconds"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return "", err
	}
	timeout := commandTimeout(ctx, args.TimeoutSeconds)
	done := t.root.Watch("shell")
	res, err := runShell(ctx, t.root, args.Command, nil, timeout)
	done()
	if err != nil {
		return "", fmt.Errorf("shell: %w", err)
	}
	if res.failed() {
		return "", errors.New(res.String())
	}
	return res.String(), nil
}

// commandTimeout is a shell call's time limit: the default, or what the
// model asked for up to shellMaxTimeout, and never past ctx's deadline (the
// run's --timeout), so that the result says which limit killed it.
func commandTimeout(ctx context.Context, asked optInt) time.Duration {
	timeout := shellDefaultTimeout
	if asked.set {
		timeout = min(time.Duration(asked.v)*time.Second, shellMaxTimeout)
	}
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(min(timeout, time.Until(dl)), time.Millisecond)
	}
	return timeout
}

type shellResult struct {
	exitCode       int    // -1 when killed by a signal
	signal         string // the signal that ended it, if any
	stdout, stderr *headTail
	timedOut       time.Duration // non-zero: killed at this timeout
	cancelled      bool          // killed because the run was cancelled
}

func (r *shellResult) failed() bool {
	return r.exitCode != 0 || r.timedOut > 0 || r.cancelled
}

func (r *shellResult) String() string {
	var sb strings.Builder
	switch {
	case r.timedOut > 0:
		fmt.Fprintf(&sb, "command killed: timed out after %s (its whole process group was killed)\n", r.timedOut)
	case r.cancelled:
		sb.WriteString("command killed: the run was cancelled (its whole process group was killed)\n")
	}
	fmt.Fprintf(&sb, "exit code: %d", r.exitCode)
	if r.signal != "" {
		fmt.Fprintf(&sb, " (signal: %s)", r.signal)
	}
	for _, s := range []struct {
		name string
		out  *headTail
	}{{"stdout", r.stdout}, {"stderr", r.stderr}} {
		if s.out.total == 0 {
			fmt.Fprintf(&sb, "\n%s: (empty)", s.name)
			continue
		}
		fmt.Fprintf(&sb, "\n%s:\n%s", s.name, strings.TrimSuffix(s.out.String(), "\n"))
	}
	return sb.String()
}

// runShell runs command in the root's directory in its own process group,
// confined by the root's sandbox, with stdin as its standard input (nil:
// /dev/null). The group is killed at the timeout, when ctx is cancelled,
// and once the shell itself exits (so that background jobs do not outlive
// the call). Output is captured through pipes into bounded buffers while it
// is produced. A command the sandbox refuses is an error, and has not run.
func runShell(ctx context.Context, root *Root, command string, stdin []byte, timeout time.Duration) (*shellResult, error) {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(runCtx, "/bin/sh", "-c", command)
	cmd.Dir = root.Dir()
	cmd.Env = root.ChildEnv()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	} // else /dev/null: nothing may wait on the user's terminal
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var killed atomic.Bool // set only when the timeout or ctx ended the command
	cmd.Cancel = func() error {
		killed.Store(true)
		return killGroup(cmd.Process.Pid)
	}

	res := &shellResult{stdout: newHeadTail(shellHead, shellTail), stderr: newHeadTail(shellHead, shellTail)}
	// Our own pipes (rather than exec's) let Wait return as soon as the shell
	// exits, so the rest of its group can be killed before reading to EOF.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return nil, err
	}
	defer errR.Close()
	cmd.Stdout, cmd.Stderr = outW, errW
	job, err := root.Sandbox.Confine(cmd)
	if err != nil {
		outW.Close()
		errW.Close()
		return nil, err
	}
	startErr := cmd.Start()
	outW.Close()
	errW.Close()
	job.Started()
	if startErr != nil {
		job.Err()
		return nil, fmt.Errorf("start /bin/sh: %w", startErr)
	}

	var copying sync.WaitGroup
	for _, c := range []struct {
		dst io.Writer
		src *os.File
	}{{res.stdout, outR}, {res.stderr, errR}} {
		copying.Go(func() { io.Copy(c.dst, c.src) })
	}

	waitErr := cmd.Wait()
	killGroup(cmd.Process.Pid) // leftover background jobs

	copied := make(chan struct{})
	go func() { copying.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(pipeGrace):
		outR.Close() // unblocks the copies
		errR.Close()
		<-copied
	}

	if err := job.Err(); err != nil {
		return nil, err
	}
	res.exitCode = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.signal = ws.Signal().String()
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return nil, fmt.Errorf("wait: %w", waitErr)
	}
	if killed.Load() {
		if ctx.Err() != nil {
			res.cancelled = true
		} else {
			res.timedOut = timeout
		}
	}
	return res, nil
}

// killGroup sends SIGKILL to the process group led by pid. A group that is
// already gone is not an error.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
