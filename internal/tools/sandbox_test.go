package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) {
	sandbox.Main() // the confined commands' children are this test binary
	if addr := os.Getenv("ASK_TOOLS_TEST_DIAL"); addr != "" {
		// A dialer for the commands under test: /bin/sh has none.
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Println("dial failed:", err)
			os.Exit(3)
		}
		c.Close()
		fmt.Println("connected")
		os.Exit(0)
	}
	code := m.Run()
	removeBenchTree()
	os.Exit(code)
}

// sandboxWorld is a working directory, its run's scratch directory, a
// directory outside both, a HOME with a planted key, and a listener on
// 127.0.0.1, for commands to try to reach.
type sandboxWorld struct {
	root                   *Root
	scratch, outside, home string
	key, dial              string
}

func newSandboxWorld(t *testing.T) *sandboxWorld {
	t.Helper()
	root := newTestRoot(t, map[string]string{"in.txt": "inside\n"})
	w := &sandboxWorld{root: root, scratch: realTempDir(t), outside: realTempDir(t), home: realTempDir(t)}
	w.key = filepath.Join(w.home, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(w.key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w.dial = fmt.Sprintf("ASK_TOOLS_TEST_DIAL=%s %s", ln.Addr(), self)
	return w
}

func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// confine puts the root's tools in a sandbox at level; Off takes it away.
func (w *sandboxWorld) confine(t *testing.T, level sandbox.Level, network bool) {
	t.Helper()
	if level == sandbox.Off {
		w.root.Sandbox = nil
		return
	}
	p := sandbox.Policy{Level: level, Workdir: w.root.Dir(), Scratch: w.scratch, AllowNetwork: network,
		Hidden: sandbox.CredentialStores(w.home, "", "")}
	w.root.Sandbox = &sandbox.Sandbox{Policy: p, Support: sandboxtest.Require(t, p)}
}

// The shell tool and a user tool really try to write outside and inside the
// working directory, connect to a listener on 127.0.0.1 and read a planted
// SSH key, at every level of the sandbox.
func TestSandboxedCommands(t *testing.T) {
	levels := []struct {
		name    string
		level   sandbox.Level
		network bool
	}{
		{"off", sandbox.Off, false},
		{"workdir", sandbox.Workdir, false},
		{"read-only", sandbox.ReadOnly, false},
		{"workdir+allow-network", sandbox.Workdir, true},
	}
	for _, l := range levels {
		t.Run(l.name, func(t *testing.T) {
			w := newSandboxWorld(t)
			w.confine(t, l.level, l.network)
			confined := l.level != sandbox.Off
			attempts := []struct {
				what, command string
				ok            bool
			}{
				{"write outside the working directory", "echo x > " + filepath.Join(w.outside, "out.txt"), !confined},
				{"write inside the working directory", "echo x > new.txt", l.level != sandbox.ReadOnly},
				{"write in TMPDIR", `echo x > "${TMPDIR:-/tmp}/t.txt"`, true},
				{"read the working directory", "cat in.txt", true},
				{"connect to 127.0.0.1", w.dial, !confined || l.network},
				{"read the planted key", "cat " + w.key, !confined},
			}
			for _, a := range attempts {
				for _, via := range []string{"shell", "user tool"} {
					out, err := runVia(t, w.root, via, a.command)
					if ok := err == nil; ok != a.ok {
						t.Errorf("%s, by the %s: succeeded=%v, want %v\n%s%v", a.what, via, ok, a.ok, out, err)
					}
					if strings.Contains(out, "OPENSSH PRIVATE KEY") != (a.ok && strings.HasPrefix(a.command, "cat "+w.key)) {
						t.Errorf("%s, by the %s: the key was read: %q", a.what, via, out)
					}
				}
			}
			_, err := os.Stat(filepath.Join(w.outside, "out.txt"))
			if exists := err == nil; exists == confined {
				t.Errorf("the file outside the working directory exists=%v at level %s", exists, l.level)
			}
		})
	}
}

// runVia runs command with the shell tool, or as a user tool's command.
func runVia(t *testing.T, root *Root, via, command string) (string, error) {
	t.Helper()
	if via == "shell" {
		return shell{root}.Run(context.Background(), json.RawMessage(fmt.Sprintf(`{"command":%q}`, command)))
	}
	tools, err := parseToolsFile([]byte(fmt.Sprintf(`[{"name":"probe","description":"d","command":%q}]`, command)), root)
	if err != nil {
		t.Fatal(err)
	}
	return tools[0].Run(context.Background(), json.RawMessage(`{}`))
}

// Where the kernel cannot confine, a sandboxed command is refused with one
// line saying why, and does not run.
func TestSandboxRefusesWhereTheKernelCannot(t *testing.T) {
	w := newSandboxWorld(t)
	marker := filepath.Join(w.root.Dir(), "ran")
	w.root.Sandbox = &sandbox.Sandbox{
		Policy:  sandbox.Policy{Level: sandbox.ReadOnly, Workdir: w.root.Dir(), Scratch: w.scratch},
		Support: sandbox.Support{LandlockABI: 7, Network: "cannot make a new user and network namespace: user namespaces are not allowed here"},
	}
	if (shell{w.root}).Info().Sandboxed {
		t.Error("a sandbox that cannot confine must not mark the shell tool as sandboxed")
	}
	for _, via := range []string{"shell", "user tool"} {
		out, err := runVia(t, w.root, via, "touch "+marker)
		var refused *sandbox.RefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("%s: err = %v (result %q), want a refusal", via, err, out)
		}
		const want = "refused by the sandbox: cannot cut off the network here: cannot make a new user and network namespace: user namespaces are not allowed here (--allow-network keeps the network and needs no network namespace); commands never run unconfined"
		if got := err.Error(); !strings.HasSuffix(got, want) || strings.Contains(got, "\n") {
			t.Errorf("%s: refusal = %q, want one line ending in %q", via, got, want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: the refused command ran", via)
		}
	}
}

// Issue 37, item 2: what a sandboxed command does at .git's top level is
// reported: a name git writes (FETCH_HEAD) as a change; a name it does not
// (commondir), which the sandbox removes when the command ends, in the
// command's output.
func TestSandboxedGitTopLevelIsReported(t *testing.T) {
	t.Parallel()
	w := newWatched(t, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", ".git/objects/": "", ".git/refs/": ""}, false)
	p := sandbox.Policy{Level: sandbox.Workdir, Workdir: w.root.Dir(), Scratch: realTempDir(t)}
	w.root.Sandbox = &sandbox.Sandbox{Policy: p, Support: sandboxtest.Require(t, p)}
	args, _ := json.Marshal(map[string]string{"command": "echo 0 > .git/FETCH_HEAD; echo ../x > .git/commondir"})
	out, err := (shell{w.root}).Run(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "removed") || !strings.Contains(out, ".git/commondir") {
		t.Errorf("the removal of .git/commondir was not said:\n%s", out)
	}
	if got := w.take(); !slices.Equal(got, []string{"created .git/FETCH_HEAD (shell)"}) {
		t.Errorf("changes %q", got)
	}
	if _, err := os.Lstat(filepath.Join(w.root.Dir(), ".git", "commondir")); err == nil {
		t.Error(".git/commondir is still there")
	}
}
