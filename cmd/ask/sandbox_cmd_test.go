package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/sandbox"
)

func TestSandboxCheck(t *testing.T) {
	t.Parallel()
	works := func() sandbox.Support { return sandbox.Support{LandlockABI: 7, Namespaces: "user"} }
	r := runAsk(t, askEnv{sandbox: works}, "sandbox", "check")
	var got sandbox.Report
	if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 0 || err != nil || !got.Confines || !got.Network || len(got.Layers) != 5 {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, l := range got.Layers {
		if !l.OK || l.How == "" || l.Problem != "" {
			t.Errorf("layer %+v", l)
		}
	}
	r = runAsk(t, askEnv{sandbox: works, tty: true}, "sandbox", "check")
	for _, want := range []string{
		"namespaces  yes   new user, mount, PID, IPC and UTS namespaces, a session of its own, capabilities dropped",
		"network     yes   a new network namespace with only its own loopback",
		"landlock    yes   Landlock ABI 7",
		"seccomp     yes   an allow-list of system calls and of socket families and types (UNIX sockets only as stream or seqpacket pairs)",
		"limits      yes   1024 processes and threads per command",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table has no %q:\n%s", want, r.stdout)
		}
	}
	// Each missing layer is named, with why.
	for _, c := range []struct {
		support sandbox.Support
		layer   string
		problem string
		stderr  string
	}{
		{sandbox.Support{LandlockABI: 7, Namespaces: "user", Network: "user namespaces are not allowed here"},
			"network", "user namespaces are not allowed here", "--sandbox can confine commands here only with --allow-network"},
		{sandbox.Support{LandlockABI: 7, Namespaces: "user", Seccomp: "this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)"},
			"seccomp", "this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)", "every sandboxed command would be refused"},
		{sandbox.Support{LandlockABI: 7, NamespacesProblem: "cannot mount /proc for the new PID namespace"},
			"namespaces", "cannot mount /proc for the new PID namespace", "every sandboxed command would be refused"},
		{sandbox.Support{FileSystem: "Landlock is disabled in this kernel", Namespaces: "user"},
			"landlock", "Landlock is disabled in this kernel", "every sandboxed command would be refused"},
	} {
		r := runAsk(t, askEnv{sandbox: func() sandbox.Support { return c.support }}, "sandbox", "check")
		var got sandbox.Report
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != exitFailure || !strings.Contains(r.stderr, c.stderr) {
			t.Errorf("%s: exit %d stdout %q stderr %q", c.layer, r.code, r.stdout, r.stderr)
			continue
		}
		for _, l := range got.Layers {
			if l.Layer == c.layer && (l.OK || l.Problem != c.problem) {
				t.Errorf("%s: %+v, want the problem %q", c.layer, l, c.problem)
			}
		}
	}
	r = runAsk(t, askEnv{}, "sandbox", "check")
	if r.code != exitFailure || !strings.Contains(r.stderr, "every sandboxed command would be refused") {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}
