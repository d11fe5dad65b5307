package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

var allLayers = []Layer{LayerNamespaces, LayerLandlock, LayerSeccomp}

// only leaves every layer out but on.
func only(on ...Layer) []Layer {
	var out []Layer
	for _, l := range allLayers {
		if !slices.Contains(on, l) {
			out = append(out, l)
		}
	}
	return out
}

// Each layer holds alone: with the others left out, it still stops what it
// is there to stop.
func TestLayersHoldAlone(t *testing.T) {
	w := newWorld(t)
	plain := filepath.Join(w.outside, "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	pgpass := filepath.Join(w.home, ".pgpass")
	if err := os.WriteFile(pgpass, []byte("SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := hostSockets(t, filepath.Join(w.outside, "daemon.sock"))
	key := 0x41534c00 | os.Getpid()&0xff
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	if out, err := exec.Command("git", "init", "-q", w.workdir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}

	// Dropping capabilities, which no layer can leave out, stops these
	// alone too, as root.
	stoppedByCapabilities := map[string]bool{"attach to a host process": true, "mount": true, "chown outside": true}
	controlled := map[string]bool{}
	for _, c := range []struct {
		what   string
		layer  Layer
		script string // a shell line, or an attack's name and argument
		attack [2]string
	}{
		{what: "write outside", layer: LayerNamespaces, script: "echo x > " + plain},
		{what: "write outside", layer: LayerLandlock, script: "echo x > " + plain},
		{what: "read a credential store", layer: LayerNamespaces, script: "cat " + pgpass},
		{what: "read a credential store", layer: LayerLandlock, script: "cat " + pgpass},
		{what: "chmod 777 outside", layer: LayerNamespaces, attack: [2]string{"chmod", plain}},
		{what: "chmod 777 outside", layer: LayerSeccomp, attack: [2]string{"chmod", plain}},
		{what: "chown outside", layer: LayerNamespaces, script: "chown 65534:65534 " + plain + " && test $(stat -c %u " + plain + ") = 65534"},
		{what: "chown outside", layer: LayerSeccomp, script: "chown 65534:65534 " + plain + " && test $(stat -c %u " + plain + ") = 65534"},
		{what: "connect to a host UNIX socket", layer: LayerSeccomp, attack: [2]string{"unix", sock}},
		{what: "rewrite host shared memory", layer: LayerNamespaces, attack: [2]string{"shm", strconv.Itoa(key)}},
		{what: "attach to a host process", layer: LayerNamespaces, attack: [2]string{"ptrace", strconv.Itoa(sleeper.Process.Pid)}},
		{what: "attach to a host process", layer: LayerLandlock, attack: [2]string{"ptrace", strconv.Itoa(sleeper.Process.Pid)}},
		{what: "attach to a host process", layer: LayerSeccomp, attack: [2]string{"ptrace", strconv.Itoa(sleeper.Process.Pid)}},
		{what: "use a kernel keyring", layer: LayerSeccomp, attack: [2]string{"keyring", ""}},
		{what: "mount", layer: LayerSeccomp, attack: [2]string{"mount", w.workdir}},
		{what: "write a kernel setting", layer: LayerNamespaces, attack: [2]string{"sysctl", ""}},
		{what: "write a kernel setting", layer: LayerLandlock, attack: [2]string{"sysctl", ""}},
		{what: "plant a git hook", layer: LayerNamespaces, script: "echo 'touch PWNED' > .git/hooks/pre-commit"},
	} {
		if c.what == "chown outside" && os.Geteuid() != 0 {
			continue // only root can give a file away in the first place
		}
		if !controlled[c.what] {
			// With no layer at all the attack works: the layer is what stops it.
			p := w.policy(Workdir, false)
			p.Without = allLayers
			sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
			controlled[c.what] = true
			var ok bool
			var out string
			if c.script != "" {
				o, err := run(t, sb, w.workdir, c.script)
				ok, out = err == nil, o
			} else {
				ok, out = attack(t, sb, w.workdir, c.attack[0], c.attack[1])
			}
			// As root, dropping capabilities stops some; as anyone else, a
			// kernel setting was never writable.
			want := !stoppedByCapabilities[c.what]
			if os.Geteuid() != 0 {
				want = c.what != "write a kernel setting" && c.what != "mount"
			}
			if ok != want {
				t.Errorf("%s with no layer: succeeded=%v, want %v\n%s", c.what, ok, want, out)
			}
			if err := os.WriteFile(plain, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chmod(plain, 0o600)
			os.Remove(filepath.Join(w.workdir, ".git", "hooks", "pre-commit"))
		}
		t.Run(string(c.layer)+" stops "+c.what, func(t *testing.T) {
			p := w.policy(Workdir, false)
			p.Without = only(c.layer)
			sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
			if c.script != "" {
				if out, err := run(t, sb, w.workdir, c.script); err == nil {
					t.Errorf("%s: succeeded\n%s", c.script, out)
				}
			} else if ok, out := attack(t, sb, w.workdir, c.attack[0], c.attack[1]); ok {
				t.Errorf("%s: succeeded\n%s", c.attack[0], out)
			}
		})
	}
	if b, _ := os.ReadFile(plain); string(b) != "x" {
		t.Errorf("%s was written: %q", plain, b)
	}
	if info, _ := os.Stat(plain); info.Mode() != 0o600 {
		t.Errorf("%s's mode changed to %v", plain, info.Mode())
	}
}

// C1 again, one layer at a time: the namespaces (a session without a
// terminal, terminals of its own), Landlock (no write or ioctl on a
// terminal) and seccomp (no TIOCSTI) each stop it alone.
func TestTIOCSTIEachLayerAlone(t *testing.T) {
	w := newWorld(t)
	for _, l := range allLayers {
		t.Run(string(l), func(t *testing.T) {
			p := w.policy(ReadOnly, false)
			p.Without = only(l)
			requireSupport(t, p)
			if out := atTerminal(t, p); !strings.Contains(out, "STOPPED:") || !strings.Contains(out, "PENDING=0\n") {
				t.Errorf("the command typed into the terminal:\n%s", out)
			}
		})
	}
}

// A command may have only so many processes at once: a fork bomb stops at
// the limit, and ordinary work under it runs.
func TestProcessLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it starts hundreds of processes")
	}
	w := newWorld(t)
	p := w.policy(Workdir, false)
	p.MaxProcesses = 310 // pid_max, which holds for root, takes no less than 301
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	bomb := `i=0; while [ $i -lt 400 ]; do sleep 2 & i=$((i+1)); done; echo ALL STARTED`
	if out, err := run(t, sb, w.workdir, bomb); err == nil || strings.Contains(out, "ALL STARTED") {
		t.Errorf("400 processes started under a limit of 310: %v\n%s", err, out)
	}
	if out, err := run(t, sb, w.workdir, `i=0; while [ $i -lt 50 ]; do sleep 1 & i=$((i+1)); done; wait; echo OK`); err != nil || !strings.Contains(out, "OK") {
		t.Errorf("50 processes under a limit of 310: %v\n%s", err, out)
	}
}

// The scratch space is bounded for the whole run, and lasts from one
// command to the next.
func TestScratchSpaceLimit(t *testing.T) {
	w := newWorld(t)
	p := w.policy(ReadOnly, false)
	p.ScratchSize = 4 << 20
	support := requireSupport(t, p)
	if support.Scratch != "" {
		t.Skipf("the scratch space cannot be bounded here: %s", support.Scratch)
	}
	sb := &Sandbox{Policy: p, Support: support}
	defer sb.Close()
	if out, err := run(t, sb, w.workdir, `echo kept > "$TMPDIR/kept" && head -c 3000000 /dev/zero > "$XDG_CACHE_HOME/big"`); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := run(t, sb, w.workdir, `cat "$TMPDIR/kept" && head -c 3000000 /dev/zero > "$TMPDIR/more"`)
	if !strings.Contains(out, "kept") || err == nil || !strings.Contains(out, "No space left") {
		t.Errorf("6 MB in a 4 MB scratch space, or the first command's file gone: %v\n%s", err, out)
	}
	// Nothing of it reached the disk.
	if entries, _ := os.ReadDir(filepath.Join(w.scratch, "tmp")); len(entries) != 0 {
		t.Errorf("the scratch directory on disk holds %v", entries)
	}
}

// The attacks again, as a user other than root (nobody), where the sandbox
// rests on an unprivileged user namespace and RLIMIT_NPROC holds. Root
// runs this; the tests it runs must not skip (CI is set).
func TestAsAnUnprivilegedUser(t *testing.T) {
	switch {
	case os.Getenv("ASK_SANDBOX_UNPRIVILEGED") != "":
		t.Skip("already run as nobody")
	case os.Geteuid() != 0:
		t.Skip("root runs these again as nobody; this is no root")
	case testing.Short():
		t.Skip("slow: it runs the attacks again")
	}
	requireSupport(t, Policy{Level: ReadOnly})
	dir, err := os.MkdirTemp("", "ask-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	self, _ := os.Executable()
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.WriteFile(bin, b, 0o755); err != nil || os.Chmod(dir, 0o755) != nil || os.Mkdir(tmp, 0o700) != nil || os.Chown(tmp, 65534, 65534) != nil {
		t.Fatalf("cannot set up a directory for nobody: %v", err)
	}
	cmd := exec.Command(bin, "-test.count=1", "-test.run=^(TestTIOCSTI|TestGit|TestHostUnix|TestModes|TestSysV|TestPOSIX|TestInherited|TestSetsid|TestCredential|TestLayers|TestProcessLimit|TestScratch|TestConfinement|TestAllowHost|TestCommandDies|TestInitKeeps|TestSeccompAllowList|TestDatagram|TestCheck)")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp, "CI=1", "ASK_SANDBOX_UNPRIVILEGED=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}
