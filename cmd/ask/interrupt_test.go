package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

// startAsk runs the real ask binary (TestMain installs this test binary as
// "ask" on PATH, with main's own signal handling) against srv, with a shell
// call to command approved, and waits until the command has written
// started.pid in the work directory.
func startAsk(t *testing.T, command string) (cmd *exec.Cmd, wd, transcript string, stdout, stderr *bytes.Buffer) {
	t.Helper()
	return startAskWrapped(t, nil, command)
}

// startAskWrapped is startAsk with ask started by the command wrap, which
// ends by exec'ing its arguments (so that ask keeps the process's pid).
func startAskWrapped(t *testing.T, wrap []string, command string) (cmd *exec.Cmd, wd, transcript string, stdout, stderr *bytes.Buffer) {
	t.Helper()
	bin, err := exec.LookPath("ask")
	if err != nil || !strings.Contains(bin, "testscript-main") {
		t.Fatalf("ask is not the test binary installed by TestMain: %q, %v", bin, err)
	}
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "shell", `{"command":`+string(providers.Quote(command))+`}`)}},
		fakeprovider.Reply{Text: "not reached"})
	t.Cleanup(srv.Close)
	wd, state := t.TempDir(), t.TempDir()
	transcript = filepath.Join(t.TempDir(), "run.jsonl")
	argv := append(wrap, bin, "--yes", "--workdir", wd, "--transcript", transcript, "run the command")
	cmd = exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "ASK_PROVIDER=openai", "ASK_BASE_URL="+srv.URL, "OPENAI_API_KEY=fake-test-not-a-real-key-0000",
		"HOME="+state, "XDG_STATE_HOME="+state)
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(wd, "started.pid")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool never started; stderr:\n%s", stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let the shell reach its sleep
	return cmd, wd, transcript, stdout, stderr
}

// waitExit waits at most limit for cmd and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		cmd.Process.Kill()
		t.Fatalf("ask did not exit within %s", limit)
		return 0
	}
}

// The first Ctrl-C stops the run cleanly: the running tool's process group
// is killed, the transcript ends with run.finished "interrupted", exit 130.
func TestFirstInterruptStopsCleanly(t *testing.T) {
	t.Parallel()
	cmd, wd, transcript, stdout, stderr := startAsk(t, "echo $$ > started.pid; exec sleep 30")
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code := waitExit(t, cmd, 10*time.Second)
	took := time.Since(start)
	if code != exitInterrupted {
		t.Errorf("exit %d, want 130; stderr:\n%s", code, stderr)
	}
	if took > 3*time.Second {
		t.Errorf("stopping took %s", took)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	// The file the command wrote before it was killed is said too.
	if got := strings.TrimSpace(stderr.String()); got != "ask: created started.pid (by shell)\nask: interrupted" {
		t.Errorf("stderr %q, want the change and the one line \"ask: interrupted\"", got)
	}
	assertGone(t, filepath.Join(wd, "started.pid"))

	evs := readTranscript(t, transcript)
	want := "run.started, request, response 200, assistant, tool.started shell, file.changed, tool.finished shell error, error, run.finished interrupted 130"
	if got := strings.Join(summarize(evs), ", "); got != want {
		t.Fatalf("events:\n  %s\nwant:\n  %s", got, want)
	}
	if c := evs[6].Content; !strings.Contains(c, "command killed: the run was cancelled") {
		t.Errorf("tool.finished content %q", c)
	}
	if e := evs[7].Error; e != "interrupted" {
		t.Errorf("error event %q", e)
	}
}

// A second Ctrl-C exits at once, even while the clean stop is still under
// way: here it waits on a daemon that escaped the tool's process group and
// holds its output pipe open, which delays the clean stop by seconds.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	t.Parallel()
	cmd, wd, transcript, _, stderr := startAsk(t, "setsid sleep 30 & echo $! > daemon.pid; echo $$ > started.pid; exec sleep 30")
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(wd, "daemon.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	cmd.Process.Signal(os.Interrupt)
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	code := waitExit(t, cmd, 10*time.Second)
	if took := time.Since(start); took > time.Second {
		t.Errorf("exiting after the second interrupt took %s", took)
	}
	if code != exitInterrupted {
		t.Errorf("exit %d, want 130; stderr:\n%s", code, stderr)
	}
	// The clean stop had not finished: no run.finished, but every event
	// written so far is whole.
	evs := readTranscript(t, transcript)
	for _, ev := range evs {
		if ev.Type == records.TypeRunFinished {
			t.Errorf("the run finished cleanly before the second interrupt; the test proves nothing")
		}
	}
	if len(evs) < 5 || evs[4].Type != records.TypeToolStarted {
		t.Errorf("transcript: %v", summarize(evs))
	}
}
