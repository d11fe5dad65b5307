package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestShell(t *testing.T) {
	root := newTestRoot(t, map[string]string{"hello.txt": "hi there\n"})
	t.Setenv("OPENAI_API_KEY", "fake-must-not-leak")
	t.Setenv("GITHUB_TOKEN", "ghp-must-not-leak")
	t.Setenv("ASK_TEST_VISIBLE", "visible")
	tests := []struct {
		name, args string
		want       string // exact result, or
		contains   []string
		absent     []string
		wantErr    bool
	}{
		{name: "stdout", args: `{"command":"echo hello"}`, want: "exit code: 0\nstdout:\nhello\nstderr: (empty)"},
		{name: "stdout and stderr", args: `{"command":"echo out; echo err >&2"}`, want: "exit code: 0\nstdout:\nout\nstderr:\nerr"},
		{name: "no output", args: `{"command":"true"}`, want: "exit code: 0\nstdout: (empty)\nstderr: (empty)"},
		{name: "non-zero exit is an error with the output", args: `{"command":"echo partial; echo broken >&2; exit 3"}`, wantErr: true,
			want: "exit code: 3\nstdout:\npartial\nstderr:\nbroken"},
		{name: "exit 1", args: `{"command":"false"}`, wantErr: true, want: "exit code: 1\nstdout: (empty)\nstderr: (empty)"},
		{name: "command not found", args: `{"command":"no-such-command-ask-test"}`, wantErr: true, contains: []string{"exit code: 127", "not found"}},
		{name: "runs in the working directory", args: `{"command":"pwd; cat hello.txt"}`, want: fmt.Sprintf("exit code: 0\nstdout:\n%s\nhi there\nstderr: (empty)", root.Dir())},
		{name: "stdin is empty", args: `{"command":"cat; echo done"}`, want: "exit code: 0\nstdout:\ndone\nstderr: (empty)"},
		{name: "credentials are not passed on", args: `{"command":"env"}`,
			contains: []string{"ASK_TEST_VISIBLE=visible"}, absent: []string{"OPENAI_API_KEY", "GITHUB_TOKEN", "must-not-leak"}},
		{name: "killed by a signal", args: `{"command":"kill -TERM $$"}`, wantErr: true, contains: []string{"exit code: -1 (signal: terminated)"}},
		{name: "huge timeout is capped, not refused", args: `{"command":"true","timeout_seconds":100000}`, want: "exit code: 0\nstdout: (empty)\nstderr: (empty)"},
		{name: "empty command", args: `{"command":"  "}`, wantErr: true, contains: []string{`at /properties/command: pattern:`}},
		{name: "zero timeout", args: `{"command":"true","timeout_seconds":0}`, wantErr: true, contains: []string{"at /properties/timeout_seconds: minimum: 0/1 is less than 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runTool(t, shell{root}, tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v (result %q)", err, tt.wantErr, got)
			}
			if err != nil {
				got = err.Error()
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("result =\n%s\nwant\n%s", got, tt.want)
			}
			for _, c := range tt.contains {
				if !strings.Contains(got, c) {
					t.Errorf("result\n%s\ndoes not contain %q", got, c)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(got, a) {
					t.Errorf("result contains %q", a)
				}
			}
		})
	}
}

func TestShellTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it waits out a timeout of 1s")
	}
	root := newTestRoot(t, nil)
	// The grandchild sleep shares the pipes: only killing the whole group
	// lets the call return.
	_, err := runTool(t, shell{root}, `{"command":"echo started; sleep 30; echo never","timeout_seconds":1}`)
	if err == nil {
		t.Fatal("a command past its timeout succeeded")
	}
	for _, want := range []string{
		"command killed: timed out after 1s (its whole process group was killed)",
		"exit code: -1 (signal: killed)",
		"stdout:\nstarted",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("timeout result\n%s\ndoes not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "never") {
		t.Error("the command went on after its timeout")
	}
}

func TestShellCancelled(t *testing.T) {
	root := newTestRoot(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := shell{root}.Run(ctx, json.RawMessage(`{"command":"sleep 30"}`))
	if err == nil || !strings.Contains(err.Error(), "command killed: the run was cancelled") {
		t.Errorf("cancelled command: %v", err)
	}
}

// A background job must not outlive the call, nor keep it waiting on its
// open pipes.
func TestShellKillsBackgroundJobs(t *testing.T) {
	root := newTestRoot(t, nil)
	got, err := runTool(t, shell{root}, `{"command":"sleep 30 & echo $!"}`)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(got, "stdout:\n")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.Split(rest, "\n")[0]))
	if err != nil {
		t.Fatalf("no pid in %q", got)
	}
	// The kill is sent before Run returns; the kernel may take a moment to
	// reap the process, which is not ours to wait for.
	deadline := time.Now().Add(5 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("background job %d still running after the call", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processAlive reports whether pid runs (a zombie does not count).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

// 100 MB of output is captured in bounded memory and reported as head and
// tail with the count of what was dropped.
func TestShellHugeOutput(t *testing.T) {
	root := newTestRoot(t, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := runTool(t, shell{root}, `{"command":"head -c 100000000 /dev/zero | tr '\\0' a; echo tail-marker"}`)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("capturing 100 MB allocated %d bytes; it must be bounded", alloc)
	}
	if len(got) > shellHead+shellTail+1024 {
		t.Errorf("result is %d bytes, over the cap", len(got))
	}
	want := fmt.Sprintf("[... %d bytes dropped; 100000012 bytes in all; only the first %d and last %d are shown ...]", 100000012-shellHead-shellTail, shellHead, shellTail)
	if !strings.Contains(got, want) {
		t.Errorf("result does not say what was dropped (%q); got %.120q ... %.200q", want, got, got[len(got)-200:])
	}
	if !strings.HasPrefix(got, "exit code: 0\nstdout:\naaaa") || !strings.HasSuffix(got, "aaaatail-marker\nstderr: (empty)") {
		t.Errorf("result head/tail wrong: %.120q ... %.120q", got, got[len(got)-120:])
	}
}

func TestShellViaRegistry(t *testing.T) {
	root := newTestRoot(t, nil)
	r, err := NewRegistry(Builtins(root)...)
	if err != nil {
		t.Fatal(err)
	}
	got, isErr := r.Call(context.Background(), "shell", `{"command":"exit 4"}`)
	if !isErr || !strings.HasPrefix(got, "exit code: 4") {
		t.Errorf("Call(shell exit 4) = %q, %v; want an error result with the exit code", got, isErr)
	}
	got, isErr = r.Call(context.Background(), "shell", `{"command":"true","timeout_seconds":"5"}`)
	if !isErr || !strings.Contains(got, "at /properties/timeout_seconds: type: 5 has type \"string\", want \"integer\"") {
		t.Errorf("Call(shell, string timeout) = %q, %v", got, isErr)
	}
}
