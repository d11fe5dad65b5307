package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ask-cli/ask/internal/term/termtest"
)

// These tests attack the sandbox for real, each the way a finding of the
// second trust review did (issue 29). An attack that works says ATTACK
// SUCCEEDED and exits 0; one that is stopped says why and exits 3.

// attacks are what the test binary does when run inside the sandbox as
// TestAttackHelper; arg is ASK_SANDBOX_ATTACK_ARG.
var attacks = map[string]func(arg string) error{
	// Push "X\n" into a terminal's input: /dev/tty, the terminal named by
	// arg, and whatever the standard descriptors are.
	"tiocsti": func(arg string) error {
		var errs []error
		// The kernel reads the request as 32 bits: set high bits must not
		// slip past the filter either.
		try := func(fd int) error {
			var err error
			for _, req := range []uint64{unix.TIOCSTI | 1<<32, unix.TIOCSTI} {
				err = nil
				for _, c := range []byte("X\n") {
					if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(&c))); e != 0 {
						err = e
						break
					}
				}
				if err == nil {
					return nil
				}
			}
			return err
		}
		for _, path := range []string{"/dev/tty", arg} {
			fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY, 0)
			if err == nil {
				err = try(fd)
				unix.Close(fd)
			}
			if err == nil {
				return nil
			}
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		}
		for fd := range 3 {
			if err := try(fd); err == nil {
				return nil
			}
		}
		return errors.Join(errs...)
	},
	"chmod": func(arg string) error { return unix.Chmod(arg, 0o777) },
	// Connect to a UNIX socket by its path, with the family's high bits
	// set too (the kernel reads it as 32 bits), and send to it from a
	// datagram pair.
	"unix": func(arg string) error {
		var errs []error
		for _, family := range []uint64{unix.AF_UNIX | 1<<32, unix.AF_UNIX} {
			fd, _, e := unix.Syscall(unix.SYS_SOCKET, uintptr(family), unix.SOCK_STREAM, 0)
			if e != 0 {
				errs = append(errs, e)
				continue
			}
			err := unix.Connect(int(fd), &unix.SockaddrUnix{Name: arg})
			unix.Close(int(fd))
			if err == nil {
				return nil
			}
			errs = append(errs, err)
		}
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
		if err == nil {
			err = unix.Sendto(pair[0], []byte("x"), 0, &unix.SockaddrUnix{Name: arg + ".dgram"})
			unix.Close(pair[0])
			unix.Close(pair[1])
			if err == nil {
				return nil
			}
		}
		return errors.Join(append(errs, err)...)
	},
	// Send a datagram to a host's datagram socket by its path (syslog's,
	// journald's, $NOTIFY_SOCKET), from every kind of UNIX socket: a raw
	// pair (which the kernel makes a datagram pair), a datagram pair, a
	// datagram socket, and the stream and seqpacket pairs the filter allows.
	"dgram": func(arg string) error {
		var errs []error
		to := &unix.SockaddrUnix{Name: arg}
		for _, typ := range []int{unix.SOCK_RAW, unix.SOCK_DGRAM, unix.SOCK_STREAM, unix.SOCK_SEQPACKET} {
			pair, err := unix.Socketpair(unix.AF_UNIX, typ, 0)
			if err != nil {
				errs = append(errs, fmt.Errorf("socketpair type %d: %w", typ, err))
				continue
			}
			err = unix.Sendto(pair[0], []byte("PAIR"), 0, to)
			unix.Close(pair[0])
			unix.Close(pair[1])
			if err == nil && (typ == unix.SOCK_RAW || typ == unix.SOCK_DGRAM) {
				return nil
			}
			errs = append(errs, fmt.Errorf("sendto from a pair of type %d: %v", typ, err))
		}
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
		if err == nil {
			err = unix.Sendto(fd, []byte("SOCKET"), 0, to)
			unix.Close(fd)
			if err == nil {
				return nil
			}
		}
		return errors.Join(append(errs, err)...)
	},
	// Rewrite a System V shared memory segment by its key.
	"shm": func(arg string) error {
		key, _ := strconv.Atoi(arg)
		id, err := unix.SysvShmGet(key, 0, 0)
		if err != nil {
			return err
		}
		b, err := unix.SysvShmAttach(id, 0, 0)
		if err != nil {
			return err
		}
		copy(b, "REWRITTEN")
		return unix.SysvShmDetach(b)
	},
	// Write through a descriptor number the command was never given.
	"fd": func(arg string) error {
		fd, _ := strconv.Atoi(arg)
		_, err := unix.Write(fd, []byte("WRITTEN THROUGH\n"))
		return err
	},
	// Change the loopback's MTU to what it is: CAP_NET_ADMIN over the
	// host's network.
	"netadmin": func(string) error {
		sock, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(sock)
		ifr, err := unix.NewIfreq("lo")
		if err != nil {
			return err
		}
		if err := unix.IoctlIfreq(sock, unix.SIOCGIFMTU, ifr); err != nil {
			return err
		}
		return unix.IoctlIfreq(sock, unix.SIOCSIFMTU, ifr)
	},
	"environ": func(arg string) error {
		b, err := os.ReadFile("/proc/" + arg + "/environ")
		if err == nil && len(b) == 0 {
			err = errors.New("empty")
		}
		return err
	},
	"ptrace": func(arg string) error {
		pid, _ := strconv.Atoi(arg)
		if err := unix.PtraceAttach(pid); err != nil {
			return err
		}
		// Attached: that was the attack. Let it go once it has stopped.
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, unix.WALL, nil)
		unix.PtraceDetach(pid)
		return nil
	},
	"keyring": func(string) error {
		_, err := unix.AddKey("user", "ask-sandbox-test", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
		return err
	},
	"mount": func(arg string) error { return unix.Mount("tmpfs", arg, "tmpfs", 0, "") },
	// Write a kernel setting of the whole machine, with its own value.
	"sysctl": func(string) error {
		const path = "/proc/sys/kernel/printk_ratelimit"
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(path, b, 0)
	},
}

// TestAttackHelper is not a test: it is the program attack runs.
func TestAttackHelper(t *testing.T) {
	name := os.Getenv("ASK_SANDBOX_ATTACK")
	if name == "" {
		t.Skip("run by the sandbox tests as a helper")
	}
	if err := attacks[name](os.Getenv("ASK_SANDBOX_ATTACK_ARG")); err != nil {
		fmt.Println("STOPPED:", err)
		os.Exit(3)
	}
	fmt.Println("ATTACK SUCCEEDED")
	os.Exit(0)
}

// attackLine is the command line that runs an attack in the sandbox.
func attackLine(name, arg string) string {
	self, _ := os.Executable()
	return fmt.Sprintf("ASK_SANDBOX_ATTACK=%s ASK_SANDBOX_ATTACK_ARG='%s' %s -test.run='^TestAttackHelper$'", name, arg, self)
}

// attack runs an attack confined by sb and reports whether it succeeded.
func attack(t *testing.T, sb *Sandbox, dir, name, arg string) (bool, string) {
	t.Helper()
	out, err := run(t, sb, dir, attackLine(name, arg))
	var refused *RefusedError
	if errors.As(err, &refused) {
		t.Fatalf("%s: %v", name, err)
	}
	succeeded := err == nil && strings.Contains(out, "ATTACK SUCCEEDED")
	if !succeeded && !strings.Contains(out, "STOPPED:") {
		t.Fatalf("%s: the attack did not run: %v\n%s", name, err, out)
	}
	return succeeded, out
}

// C1: a command at the person's terminal pushed keystrokes into it with
// TIOCSTI. Here a session whose controlling terminal is a pseudo-terminal
// stands in for the person's shell running ask; the confined command
// attacks /dev/tty and the terminal's own device, and the session then
// looks for input waiting to be read.
func TestTIOCSTIAtATerminal(t *testing.T) {
	w := newWorld(t)
	p := w.policy(ReadOnly, false)
	requireSupport(t, p)
	out := atTerminal(t, p)
	if !strings.Contains(out, "STOPPED:") || !strings.Contains(out, "PENDING=0\n") {
		t.Errorf("the command typed into the terminal:\n%s", out)
	}
}

// TestTerminalSessionHelper is not a test: it is the session at a terminal
// that TestTIOCSTIAtATerminal runs, confining the attack as ask would.
func TestTerminalSessionHelper(t *testing.T) {
	spec := os.Getenv("ASK_SANDBOX_SESSION")
	if spec == "" {
		t.Skip("run by TestTIOCSTIAtATerminal as a helper")
	}
	var p Policy
	if err := json.Unmarshal([]byte(spec), &p); err != nil {
		t.Fatal(err)
	}
	sb := &Sandbox{Policy: p, Support: Check()}
	cmd := exec.Command("/bin/sh", "-c", attackLine("tiocsti", os.Getenv("ASK_SANDBOX_TTY")))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as the shell tool starts it
	job, err := sb.Confine(cmd)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cmd.CombinedOutput()
	job.Started()
	if err := job.Err(); err != nil {
		t.Fatal(err)
	}
	fmt.Print(string(out))
	// Whole lines typed in wait on the terminal, to be read by the shell.
	var n int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCINQ, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	fmt.Printf("PENDING=%d\n", n)
}

// H1: --sandbox workdir let commands write .git/hooks and .git/config,
// which the person's next git commit obeys. They stay read-only, and
// cannot be replaced; git add, stash and checkout still work.
func TestGitStaysReadOnlyInWorkdir(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	w := newWorld(t)
	p := w.policy(Workdir, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	git := "git -c user.name=t -c user.email=t@example.com "
	setup := exec.Command("/bin/sh", "-c", "git init -q && echo a > a.txt && "+git+"add a.txt && "+git+
		"commit -qm a && mkdir -p .git/modules/sub/hooks .git/worktrees/other .githooks && cp .git/config .git/modules/sub/config && "+
		"touch .git/worktrees/other/config.worktree && git config core.hooksPath .githooks")
	setup.Dir = w.workdir
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	config, _ := os.ReadFile(filepath.Join(w.workdir, ".git", "config"))
	for _, attack := range []string{
		"echo 'touch PWNED' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
		"echo '[core]' >> .git/config",
		"git config core.hooksPath /tmp",
		"rm -rf .git/hooks",
		"mv .git/config .git/config.old",
		"mv .git .git-moved",
		"echo 'touch PWNED' > .git/modules/sub/hooks/post-checkout",
		"echo '[core]' >> .git/modules/sub/config",
		"echo '[core]' >> .git/worktrees/other/config.worktree",
		"echo 'touch PWNED' > .githooks/pre-commit",
	} {
		if out, err := run(t, sb, w.workdir, attack); err == nil {
			t.Errorf("%s: succeeded\n%s", attack, out)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(w.workdir, ".git", "config")); string(got) != string(config) {
		t.Errorf(".git/config changed:\n%s", got)
	}
	for _, f := range []string{".git/hooks/pre-commit", ".git/modules/sub/hooks/post-checkout", ".git-moved", ".githooks/pre-commit"} {
		if _, err := os.Stat(filepath.Join(w.workdir, f)); err == nil {
			t.Errorf("%s was made", f)
		}
	}
	work := "echo b >> a.txt && " + git + "add a.txt && " + git + "stash -q && " + git +
		"checkout -q -b other && " + git + "checkout -q - && " + git + "stash pop -q && " + git + "status --short"
	if out, err := run(t, sb, w.workdir, work); err != nil || !strings.Contains(out, "M a.txt") {
		t.Errorf("git add, stash and checkout in the sandbox: %v\n%s", err, out)
	}
}

// hostSockets stands in for a host daemon: a stream socket at path, and a
// datagram one at path.dgram (as syslog's and journald's are).
func hostSockets(t *testing.T, path string) string {
	t.Helper()
	ln, err := net.Listen("unix", path)
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
	dg, err := net.ListenPacket("unixgram", path+".dgram")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dg.Close() })
	return path
}

// H5: commands connected to a host daemon's UNIX socket by its path, and
// were told of the SSH agent's.
func TestHostUnixSocket(t *testing.T) {
	w := newWorld(t)
	sock := hostSockets(t, filepath.Join(w.outside, "agent.sock"))
	for _, network := range []bool{false, true} {
		p := w.policy(Workdir, network)
		sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
		if ok, out := attack(t, sb, w.workdir, "unix", sock); ok {
			t.Errorf("network %v: connected to a host socket\n%s", network, out)
		}
		cmd := exec.Command("/bin/sh", "-c", `echo "agent=$SSH_AUTH_SOCK"`)
		cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
		job, err := sb.Confine(cmd)
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.Output()
		job.Started()
		if err != nil || job.Err() != nil || strings.TrimSpace(string(out)) != "agent=" {
			t.Errorf("network %v: SSH_AUTH_SOCK reached the command: %v %q", network, err, out)
		}
	}
}

// H6: commands opened the hidden ~/.ssh and its key to everyone and set
// file times outside the writable places.
func TestModesOwnersTimesOutside(t *testing.T) {
	w := newWorld(t)
	p := w.policy(ReadOnly, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	ssh := filepath.Dir(w.key)
	plain := filepath.Join(w.outside, "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(plain, old, old)
	for _, line := range []string{
		"chmod 777 " + ssh, "chmod 666 " + w.key, "chmod 755 " + plain,
		"touch -d 2001-01-01 " + plain, "touch " + plain,
	} {
		if out, err := run(t, sb, w.workdir, line); err == nil {
			t.Errorf("%s: succeeded\n%s", line, out)
		}
	}
	for path, want := range map[string]os.FileMode{ssh: 0o700 | os.ModeDir, w.key: 0o600, plain: 0o644} {
		if info, err := os.Stat(path); err != nil || info.Mode() != want {
			t.Errorf("%s: mode %v, want %v (%v)", path, info.Mode(), want, err)
		}
	}
	if info, _ := os.Stat(plain); !info.ModTime().Equal(old) {
		t.Errorf("the time of %s changed to %v", plain, info.ModTime())
	}
	// chown may pretend; the owner stays.
	before, _ := os.Stat(plain)
	run(t, sb, w.workdir, "chown 65534:65534 "+plain+"; chown -h 65534 "+plain)
	after, _ := os.Stat(plain)
	if b, a := before.Sys().(*syscall.Stat_t), after.Sys().(*syscall.Stat_t); b.Uid != a.Uid || b.Gid != a.Gid {
		t.Errorf("the owner of %s changed from %d:%d to %d:%d", plain, b.Uid, b.Gid, a.Uid, a.Gid)
	}
}

// M1: the IPC namespace was shared, and a host process's System V shared
// memory rewritten.
func TestSysVSharedMemory(t *testing.T) {
	w := newWorld(t)
	p := w.policy(Workdir, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	key := 0x41534b00 | os.Getpid()&0xff
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Skipf("no System V shared memory here: %v", err)
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	b, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.SysvShmDetach(b)
	copy(b, "ORIGINAL!")
	if ok, out := attack(t, sb, w.workdir, "shm", strconv.Itoa(key)); ok || string(b[:9]) != "ORIGINAL!" {
		t.Errorf("a host segment was rewritten: %q\n%s", b[:9], out)
	}
}

// M2: descriptors ask inherited (not close-on-exec) passed into the
// sandbox and were written through.
func TestInheritedDescriptors(t *testing.T) {
	w := newWorld(t)
	p := w.policy(Workdir, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	target := filepath.Join(w.outside, "inherited")
	f, err := os.Create(target)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd())) // as ask's own parent would leave it: inheritable
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if ok, out := attack(t, sb, w.workdir, "fd", strconv.Itoa(fd)); ok {
		t.Errorf("wrote through descriptor %d\n%s", fd, out)
	}
	if b, _ := os.ReadFile(target); len(b) != 0 {
		t.Errorf("%s holds %q", target, b)
	}
}

// M3: a setsid child outlived the run and edited a file after it.
func TestSetsidSurvivor(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it waits a second for a survivor to write")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	w := newWorld(t)
	p := w.policy(Workdir, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	late := filepath.Join(w.workdir, "late.txt")
	line := "setsid sh -c 'sleep 1; echo late > " + late + "' </dev/null >/dev/null 2>&1 & exit 0"
	if out, err := run(t, sb, w.workdir, line); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(late); err == nil {
		t.Error("a process outlived the command and wrote after it")
	}
}

// M6: credential stores DESIGN names were readable.
func TestCredentialStoresHidden(t *testing.T) {
	w := newWorld(t)
	p := w.policy(Workdir, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	for _, rel := range []string{
		".config/git/credentials", ".pgpass", ".vault-token", ".terraform.d/credentials.tfrc.json",
		".config/containers/auth.json", ".my.cnf", ".ssh/id_ed25519",
	} {
		path := filepath.Join(w.home, rel)
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, []byte("SECRET\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{"cat " + path, "cat " + filepath.Dir(path) + "/*"} {
			if out, _ := run(t, sb, w.workdir, line); strings.Contains(out, "SECRET") {
				t.Errorf("%s: a credential store was readable:\n%s", line, out)
			}
		}
	}
}

// M13: as root with --allow-network, commands kept root's capabilities:
// they changed the host's loopback and read another process's
// environment.
func TestRootWithNetworkHasNoCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	w := newWorld(t)
	p := w.policy(Workdir, true)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	out, err := run(t, sb, w.workdir, "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasSuffix(line, "0000000000000000") {
			t.Errorf("a capability remains: %s", line)
		}
	}
	sleeper := exec.Command("sleep", "30")
	sleeper.Env = append(os.Environ(), "ASK_HOST_SECRET=1")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	pid := strconv.Itoa(sleeper.Process.Pid)
	for _, a := range []struct{ name, arg string }{{"netadmin", ""}, {"environ", pid}, {"ptrace", pid}} {
		if ok, out := attack(t, sb, w.workdir, a.name, a.arg); ok {
			t.Errorf("%s: succeeded as root with the network allowed\n%s", a.name, out)
		}
	}
}

// M1, POSIX side: /dev/shm is the sandbox's own, writable, and shows no
// host process's segment.
func TestPOSIXSharedMemory(t *testing.T) {
	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skip("no /dev/shm")
	}
	w := newWorld(t)
	p := w.policy(ReadOnly, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	host := filepath.Join("/dev/shm", "ask-sandbox-test-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(host, []byte("HOST SEGMENT"), 0o600); err != nil {
		t.Skipf("cannot write /dev/shm: %v", err)
	}
	defer os.Remove(host)
	out, err := run(t, sb, w.workdir, "echo OWN SEGMENT > /dev/shm/mine && cat /dev/shm/mine; cat "+host)
	if err == nil || !strings.Contains(out, "OWN SEGMENT\n") || strings.Contains(out, "HOST SEGMENT") {
		t.Errorf("/dev/shm is not the sandbox's own: %v\n%s", err, out)
	}
	if _, err := os.Stat("/dev/shm/mine"); err == nil {
		os.Remove("/dev/shm/mine")
		t.Error("the sandbox's segment reached the host")
	}
}

// atTerminal runs the TIOCSTI attack confined by p from a session whose
// controlling terminal is a new pseudo-terminal, and returns what the
// session said.
func atTerminal(t *testing.T, p Policy) string {
	t.Helper()
	_, tty := termtest.OpenPTY(t)
	slave, err := os.OpenFile(tty, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	spec, _ := json.Marshal(p)
	self, _ := os.Executable()
	cmd := exec.Command(self, "-test.run=^TestTerminalSessionHelper$")
	cmd.Env = append(os.Environ(), "ASK_SANDBOX_SESSION="+string(spec), "ASK_SANDBOX_TTY="+tty)
	cmd.Stdin = slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the terminal's session: %v\n%s", err, out)
	}
	return string(out)
}
