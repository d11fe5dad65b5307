package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/runtest"
)

// SIGTERM and SIGHUP stop a run as Ctrl-C does, cleanly, each with its own
// exit code: the transcript ends with run.finished and no private copy of
// the last run is left behind.
func TestTerminateAndHangUpStopCleanly(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sig      syscall.Signal
		wantCode int
		wantErr  string
	}{
		{syscall.SIGTERM, 143, "ask: interrupted by SIGTERM"},
		{syscall.SIGHUP, 129, "ask: interrupted by SIGHUP"},
	} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			t.Parallel()
			if signal.Ignored(tt.sig) {
				// Under nohup ask inherits SIGHUP ignored, and keeps it so
				// (TestSignalsStartedIgnoredStayIgnored).
				t.Skipf("%v is ignored in this process, and so in the ask it starts", tt.sig)
			}
			cmd, _, transcript, _, stderr := startAsk(t, "echo $$ > started.pid; exec sleep 30")
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd, 10*time.Second); code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			// The pid file the command wrote is said first, as a change.
			if got := strings.TrimSpace(stderr.String()); got != "ask: created started.pid (by shell)\n"+tt.wantErr {
				t.Errorf("stderr %q, want %q", got, tt.wantErr)
			}
			evs := runtest.ReadTranscript(t, transcript)
			last := evs[len(evs)-1]
			if last.Type != records.TypeRunFinished || last.Status != "interrupted" || last.ExitCode != tt.wantCode {
				t.Errorf("transcript ends with %v, want run.finished interrupted %d", runtest.Summarize(evs[len(evs)-1:]), tt.wantCode)
			}
			checkStateDir(t, cmd)
		})
	}
}

// A SIGHUP or SIGINT that ask was started with ignored, as nohup and a
// script's background jobs start programs, stays ignored: the run goes on
// to its answer instead of stopping.
func TestSignalsStartedIgnoredStayIgnored(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: each case outlives a one-second command")
	}
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			name := strings.TrimPrefix(unix.SignalName(sig), "SIG")
			wrap := []string{"/bin/sh", "-c", `trap "" ` + name + `; exec "$@"`, "sh"}
			cmd, _, transcript, stdout, stderr := startAskWrapped(t, wrap, "echo $$ > started.pid; exec sleep 1")
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd, 10*time.Second); code != 0 {
				t.Errorf("exit %d, want 0: the ignored %s stopped the run; stderr:\n%s", code, name, stderr)
			}
			// startAsk's provider answers "not reached" after the call:
			// a run the signal stopped never gets that far.
			if got := strings.TrimSpace(stdout.String()); got != "not reached" {
				t.Errorf("stdout %q, want the provider's answer", got)
			}
			evs := runtest.ReadTranscript(t, transcript)
			if last := evs[len(evs)-1]; last.Type != records.TypeRunFinished || last.Status != loop.StatusCompleted {
				t.Errorf("transcript ends with %v, want run.finished completed", runtest.Summarize(evs[len(evs)-1:]))
			}
		})
	}
}

// The commands a run starts get SIGPIPE as other programs do, whatever ask
// does about its own closed stdout: `yes | head -1` in a tool ends, instead
// of writing into a closed pipe until its output limit.
func TestChildrenKeepDefaultSIGPIPE(t *testing.T) {
	t.Parallel()
	cmd, wd, _, _, stderr := startAsk(t, "grep SigIgn /proc/self/status > sigign.txt; echo $$ > started.pid")
	if code := waitExit(t, cmd, 10*time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	line, err := os.ReadFile(filepath.Join(wd, "sigign.txt"))
	if err != nil {
		t.Fatal(err)
	}
	mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(string(line), "SigIgn:")), 16, 64)
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	if mask&(1<<(syscall.SIGPIPE-1)) != 0 {
		t.Errorf("a tool's command starts with SIGPIPE ignored (SigIgn %016x)", mask)
	}
}

// checkStateDir wants the last run kept whole and no private copy left.
func checkStateDir(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	var state string
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	left, _ := filepath.Glob(filepath.Join(state, "ask", "runs", ".last-*.jsonl"))
	if len(left) > 0 {
		t.Errorf("private copies left behind: %v", left)
	}
	evs := runtest.ReadTranscript(t, runtest.NewestRun(t, filepath.Join(state, "ask", "runs")))
	if last := evs[len(evs)-1]; last.Type != records.TypeRunFinished {
		t.Errorf("the last run's copy ends with %s", last.Type)
	}
}

// A reader that goes away (`ask --events | head -1`) stops the run as an
// interruption, exit 141 as for SIGPIPE, quietly, with the transcript
// whole: the process is not killed by SIGPIPE mid-write.
func TestClosedStdoutStopsTheRun(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("ask")
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "list_directory", `{"path":"."}`)}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	state := t.TempDir()
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	cmd := exec.Command(bin, "--events", "--workdir", t.TempDir(), "--transcript", transcript, "list the files")
	cmd.Env = append(os.Environ(), "ASK_PROVIDER=openai", "ASK_BASE_URL="+srv.URL, "OPENAI_API_KEY=fake-test-not-a-real-key-0000",
		"HOME="+state, "XDG_STATE_HOME="+state)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // nobody reads stdout
	cmd.Stdout = w
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	code := waitExit(t, cmd, 10*time.Second)
	if code != 141 {
		t.Errorf("exit %d (%v), want 141; stderr:\n%s", code, cmd.ProcessState, stderr.String())
	}
	if got := stderr.String(); got != "" {
		t.Errorf("stderr %q, want nothing: 141 is quiet (DESIGN §7)", got)
	}
	evs := runtest.ReadTranscript(t, transcript)
	if last := evs[len(evs)-1]; last.Type != records.TypeRunFinished || last.Status != "interrupted" || last.ExitCode != 141 {
		t.Errorf("transcript ends with %v, want run.finished interrupted 141", runtest.Summarize(evs[len(evs)-1:]))
	}
	if n := len(srv.Requests()); n > 1 {
		t.Errorf("the run went on for nobody: %d requests", n)
	}
	checkStateDir(t, cmd)
}

// BenchmarkSignalHandlers is the cost of the handlers interrupt.OnSignals
// installs: os/signal enables each signal by a round trip to the thread
// that keeps the signals' mask, and Stop disables each by another.
//
//	go test -run '^$' -bench SignalHandlers ./cmd/ask
func BenchmarkSignalHandlers(b *testing.B) {
	all := []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE}
	for _, n := range []int{1, len(all)} {
		b.Run(fmt.Sprintf("%d-signals", n), func(b *testing.B) {
			c := make(chan os.Signal, 1)
			for b.Loop() {
				signal.Notify(c, all[:n]...)
				signal.Stop(c)
			}
		})
	}
}

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
	runtest.AssertGone(t, filepath.Join(wd, "started.pid"))

	evs := runtest.ReadTranscript(t, transcript)
	want := "run.started, request, response 200, assistant, tool.started shell, file.changed, tool.finished shell error, error, run.finished interrupted 130"
	if got := strings.Join(runtest.Summarize(evs), ", "); got != want {
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
	evs := runtest.ReadTranscript(t, transcript)
	for _, ev := range evs {
		if ev.Type == records.TypeRunFinished {
			t.Errorf("the run finished cleanly before the second interrupt; the test proves nothing")
		}
	}
	if len(evs) < 5 || evs[4].Type != records.TypeToolStarted {
		t.Errorf("transcript: %v", runtest.Summarize(evs))
	}
}
