package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	Main() // the confined children are this test binary
	os.Exit(m.Run())
}

// requireSupport is sandboxtest.Require, which this package's tests
// cannot import.
func requireSupport(t *testing.T, p Policy) Support {
	t.Helper()
	s := Check()
	if problem := s.problem(p); problem != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must be able to confine: %s", problem)
		}
		t.Skipf("this kernel cannot confine: %s", problem)
	}
	return s
}

// world is a working directory, a scratch directory, a directory outside
// both, a HOME with a planted key, and a listening socket.
type world struct {
	workdir, scratch, outside, home, key string
	addr                                 string
}

func newWorld(t *testing.T) world {
	t.Helper()
	w := world{workdir: realDir(t), scratch: realDir(t), outside: realDir(t), home: realDir(t)}
	w.key = filepath.Join(w.home, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(w.key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.key, []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.home, ".profile"), []byte("ordinary\n"), 0o644); err != nil {
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
	w.addr = ln.Addr().String()
	return w
}

func realDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (w world) policy(level Level, network bool) Policy {
	return Policy{Level: level, Workdir: w.workdir, Scratch: w.scratch, AllowNetwork: network,
		Hidden: CredentialStores(w.home, "", "")}
}

// run runs script with /bin/sh in the working directory, confined by sb.
func run(t *testing.T, sb *Sandbox, dir, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	job, err := sb.Confine(cmd)
	if err != nil {
		return "", err
	}
	err = cmd.Run()
	job.Started()
	if jerr := job.Err(); jerr != nil {
		return out.String(), jerr
	}
	return out.String(), err
}

// connectScript connects to addr with the test binary itself, which has
// no shell's /dev/tcp to rely on.
func connectProbe(addr string) string {
	self, _ := os.Executable()
	return fmt.Sprintf("ASK_SANDBOX_TEST_DIAL=%s %s -test.run=TestDialHelper", addr, self)
}

// TestDialHelper is not a test: it is the program connectProbe runs.
func TestDialHelper(t *testing.T) {
	addr := os.Getenv("ASK_SANDBOX_TEST_DIAL")
	if addr == "" {
		t.Skip("run by the sandbox tests as a helper")
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Println("DIAL FAILED:", err)
		os.Exit(3)
	}
	c.Close()
	fmt.Println("CONNECTED")
}

func TestConfinement(t *testing.T) {
	w := newWorld(t)
	cases := []struct {
		level   Level
		network bool
	}{{Off, false}, {Workdir, false}, {ReadOnly, false}, {Workdir, true}, {ReadOnly, true}}
	for _, c := range cases {
		name := string(c.level)
		if c.network {
			name += "+network"
		}
		t.Run(name, func(t *testing.T) {
			p := w.policy(c.level, c.network)
			sb := &Sandbox{Policy: p}
			if c.level != Off {
				sb.Support = requireSupport(t, p)
			}
			confined := c.level != Off
			try := func(what, script string, wantOK bool) {
				t.Helper()
				out, err := run(t, sb, w.workdir, script)
				if ok := err == nil; ok != wantOK {
					t.Errorf("%s: succeeded=%v, want %v (err %v)\n%s", what, ok, wantOK, err, out)
				}
			}
			try("write outside the working directory",
				"echo x > "+filepath.Join(w.outside, "f-"+name), !confined)
			try("write inside the working directory",
				"echo x > f-"+name, c.level != ReadOnly)
			try("write in the scratch directory",
				"echo x > "+filepath.Join(w.scratch, "f-"+name), true)
			try("write to /dev/null and stderr", "echo x > /dev/null && echo y >&2 && echo z > /dev/stderr", true)
			try("read the planted key", "cat "+w.key, !confined)
			try("list the planted key's directory", "cat "+filepath.Join(w.home, ".ssh", "*"), !confined)
			try("read an ordinary file in HOME", "cat "+filepath.Join(w.home, ".profile"), true)
			try("read the system", "cat /etc/passwd > /dev/null && ls / > /dev/null", true)
			try("connect to 127.0.0.1", connectProbe(w.addr), !confined || c.network)
			if _, err := os.Stat(filepath.Join(w.outside, "f-"+name)); (err == nil) == confined {
				t.Errorf("the file outside exists=%v with level %s", err == nil, c.level)
			}
		})
	}
}

func TestLoopbackInsideTheSandbox(t *testing.T) {
	w := newWorld(t)
	p := w.policy(ReadOnly, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	// The sandbox's own loopback is up: a test may listen and connect there.
	self, _ := os.Executable()
	out, err := run(t, sb, w.workdir, "ASK_SANDBOX_TEST_LOOPBACK=1 "+self+" -test.run=TestLoopbackHelper")
	if err != nil || !strings.Contains(out, "LOOPBACK OK") {
		t.Fatalf("loopback in the sandbox: %v\n%s", err, out)
	}
}

// TestLoopbackHelper is not a test: TestLoopbackInsideTheSandbox runs it.
func TestLoopbackHelper(t *testing.T) {
	if os.Getenv("ASK_SANDBOX_TEST_LOOPBACK") == "" {
		t.Skip("run by TestLoopbackInsideTheSandbox as a helper")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	fmt.Println("LOOPBACK OK")
}

func TestScratchEnvironment(t *testing.T) {
	w := newWorld(t)
	p := w.policy(ReadOnly, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	out, err := run(t, sb, w.workdir, `echo "$TMPDIR $GOCACHE $XDG_CACHE_HOME $GOTMPDIR" && touch "$GOCACHE/ok" "$TMPDIR/ok"`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, v := range strings.Fields(out) {
		if !within(v, w.scratch) {
			t.Errorf("%s is not in the scratch directory %s", v, w.scratch)
		}
	}
}

// A kernel that cannot confine refuses the command with one line, and the
// command does not run.
func TestRefusedWhereTheKernelCannotConfine(t *testing.T) {
	w := newWorld(t)
	marker := filepath.Join(w.outside, "ran")
	for _, c := range []struct {
		support Support
		network bool
		want    string
	}{
		{Support{FileSystem: "Landlock is disabled in this kernel (add landlock to the lsm= boot parameter)", Namespaces: "user+net", LandlockABI: 0},
			false, "refused by the sandbox: cannot confine the file system here: Landlock is disabled in this kernel (add landlock to the lsm= boot parameter); commands never run unconfined"},
		{Support{LandlockABI: 7, Network: "cannot make a new user and network namespace: user namespaces are not allowed here"},
			false, "refused by the sandbox: cannot cut off the network here: cannot make a new user and network namespace: user namespaces are not allowed here (--allow-network keeps the network and needs no network namespace); commands never run unconfined"},
		{Support{}, true, "refused by the sandbox: cannot confine the file system here: Landlock ABI 0, need 3; commands never run unconfined"},
	} {
		sb := &Sandbox{Policy: w.policy(Workdir, c.network), Support: c.support}
		_, err := run(t, sb, w.workdir, "touch "+marker)
		var refused *RefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("err = %v, want a refusal", err)
		}
		if err.Error() != c.want || strings.Contains(err.Error(), "\n") {
			t.Errorf("refusal:\n got %q\nwant %q", err, c.want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("the refused command ran")
		}
	}
	// Network allowed: no network namespace is needed, but the other
	// layers are, each refused by name when missing.
	for _, c := range []struct {
		support Support
		want    string
	}{
		{Support{LandlockABI: 7, Namespaces: "user", Network: "no network namespace"}, ""},
		{Support{LandlockABI: 7, NamespacesProblem: "user namespaces are not allowed here", Network: "no"},
			"cannot isolate commands here (the namespaces layer): user namespaces are not allowed here"},
		{Support{LandlockABI: 7, Namespaces: "user", Seccomp: "this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)"},
			"cannot filter system calls here (the seccomp layer): this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)"},
	} {
		sb := &Sandbox{Policy: w.policy(Workdir, true), Support: c.support}
		if got := sb.Problem(); got != c.want {
			t.Errorf("with --allow-network and %+v: problem %q, want %q", c.support, got, c.want)
		}
	}
}

// A child that cannot confine itself reports through the pipe and does not
// run the command.
func TestChildFailureIsARefusal(t *testing.T) {
	w := newWorld(t)
	p := w.policy(Workdir, true)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	marker := filepath.Join(w.workdir, "ran")
	cmd := exec.Command("/bin/sh", "-c", "touch "+marker)
	job, err := sb.Confine(cmd)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Args[2] = "{not json" // the policy the child reads
	runErr := cmd.Run()
	job.Started()
	err = job.Err()
	var refused *RefusedError
	if !errors.As(err, &refused) || runErr == nil {
		t.Fatalf("err = %v (run: %v), want a refusal", err, runErr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran")
	}
}

func TestParseLevel(t *testing.T) {
	for _, s := range []string{"off", "workdir", "read-only"} {
		if l, err := ParseLevel(s); err != nil || string(l) != s {
			t.Errorf("ParseLevel(%q) = %q, %v", s, l, err)
		}
	}
	if _, err := ParseLevel("readonly"); err == nil || !strings.Contains(err.Error(), "choose off, workdir or read-only") {
		t.Errorf("ParseLevel(readonly): %v", err)
	}
}
