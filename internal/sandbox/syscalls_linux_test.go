package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// socketAllowed is what a command may make with socket(2), written out
// here apart from the filter: TCP, UDP and ping over IPv4 and IPv6, and
// routing netlink.
func socketAllowed(family, typ, proto int) bool {
	switch family {
	case unix.AF_INET, unix.AF_INET6:
		return (typ == unix.SOCK_STREAM || typ == unix.SOCK_DGRAM) &&
			(proto == 0 || proto == unix.IPPROTO_TCP || proto == unix.IPPROTO_UDP || proto == unix.IPPROTO_ICMP || proto == unix.IPPROTO_ICMPV6)
	case unix.AF_NETLINK:
		return proto == unix.NETLINK_ROUTE
	}
	return false
}

var socketTypes = []int{unix.SOCK_STREAM, unix.SOCK_DGRAM, unix.SOCK_RAW, unix.SOCK_RDM, unix.SOCK_SEQPACKET, unix.SOCK_DCCP, unix.SOCK_PACKET}

// refusedCalls are the system calls the last two passes tried, and more
// no build makes, each with arguments that do nothing should it get
// through (which the test reports): the errno the filter gives is what
// they must fail with.
var refusedCalls = []struct {
	name string
	nr   uintptr
	args [6]uintptr
}{
	{"io_uring_setup", unix.SYS_IO_URING_SETUP, [6]uintptr{0, 0}},
	{"io_uring_enter", unix.SYS_IO_URING_ENTER, [6]uintptr{^uintptr(0)}},
	{"io_uring_register", unix.SYS_IO_URING_REGISTER, [6]uintptr{^uintptr(0)}},
	{"bpf", unix.SYS_BPF, [6]uintptr{^uintptr(0) >> 1, 0, 0}},
	{"perf_event_open", unix.SYS_PERF_EVENT_OPEN, [6]uintptr{0, 0, ^uintptr(0), ^uintptr(0)}},
	{"userfaultfd", unix.SYS_USERFAULTFD, [6]uintptr{^uintptr(0)}},
	{"add_key", unix.SYS_ADD_KEY, [6]uintptr{0, 0, 0, 0, 0}},
	{"request_key", unix.SYS_REQUEST_KEY, [6]uintptr{0, 0, 0, 0}},
	{"keyctl", unix.SYS_KEYCTL, [6]uintptr{^uintptr(0) >> 1}},
	{"unshare user", unix.SYS_UNSHARE, [6]uintptr{unix.CLONE_NEWUSER}},
	{"unshare net", unix.SYS_UNSHARE, [6]uintptr{unix.CLONE_NEWNET}},
	{"unshare mount", unix.SYS_UNSHARE, [6]uintptr{unix.CLONE_NEWNS}},
	{"mount", unix.SYS_MOUNT, [6]uintptr{0, 0, 0, 0, 0}},
	{"umount2", unix.SYS_UMOUNT2, [6]uintptr{0, ^uintptr(0)}},
	{"pivot_root", unix.SYS_PIVOT_ROOT, [6]uintptr{0, 0}},
	{"fsopen", unix.SYS_FSOPEN, [6]uintptr{0, ^uintptr(0)}},
	{"open_tree", unix.SYS_OPEN_TREE, [6]uintptr{^uintptr(0), 0, ^uintptr(0)}},
	{"move_mount", unix.SYS_MOVE_MOUNT, [6]uintptr{^uintptr(0), 0, ^uintptr(0), 0, ^uintptr(0)}},
	{"mount_setattr", unix.SYS_MOUNT_SETATTR, [6]uintptr{^uintptr(0), 0, ^uintptr(0), 0, 0}},
	{"setns", unix.SYS_SETNS, [6]uintptr{^uintptr(0), 0}},
	{"ptrace attach", unix.SYS_PTRACE, [6]uintptr{unix.PTRACE_ATTACH, 1}},
	{"ptrace seize", unix.SYS_PTRACE, [6]uintptr{unix.PTRACE_SEIZE, 1}},
	{"process_vm_readv", unix.SYS_PROCESS_VM_READV, [6]uintptr{1, 0, 0, 0, 0, ^uintptr(0)}},
	{"process_vm_writev", unix.SYS_PROCESS_VM_WRITEV, [6]uintptr{1, 0, 0, 0, 0, ^uintptr(0)}},
	{"pidfd_getfd", unix.SYS_PIDFD_GETFD, [6]uintptr{^uintptr(0), 0, ^uintptr(0)}},
	// Not listed: the kernel's own business.
	{"kexec_load", unix.SYS_KEXEC_LOAD, [6]uintptr{0, 0, 0, ^uintptr(0)}},
	{"init_module", unix.SYS_INIT_MODULE, [6]uintptr{0, 0, 0}},
	{"finit_module", unix.SYS_FINIT_MODULE, [6]uintptr{^uintptr(0), 0, ^uintptr(0)}},
	{"delete_module", unix.SYS_DELETE_MODULE, [6]uintptr{0, ^uintptr(0)}},
	{"reboot", unix.SYS_REBOOT, [6]uintptr{0, 0, 0, 0}},
	{"swapon", unix.SYS_SWAPON, [6]uintptr{0, 0}},
	{"acct", unix.SYS_ACCT, [6]uintptr{1}},
	{"settimeofday", unix.SYS_SETTIMEOFDAY, [6]uintptr{1, 1}},
	{"clock_settime", unix.SYS_CLOCK_SETTIME, [6]uintptr{^uintptr(0), 0}},
	{"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT, [6]uintptr{^uintptr(0), 0, 0}},
	{"name_to_handle_at", unix.SYS_NAME_TO_HANDLE_AT, [6]uintptr{^uintptr(0), 0, 0, 0, ^uintptr(0)}},
	{"fanotify_init", unix.SYS_FANOTIFY_INIT, [6]uintptr{^uintptr(0), 0}},
	{"kcmp", unix.SYS_KCMP, [6]uintptr{0, 0, ^uintptr(0), 0, 0}},
	{"quotactl", unix.SYS_QUOTACTL, [6]uintptr{0, 0, 0, 0}},
	{"syslog", unix.SYS_SYSLOG, [6]uintptr{^uintptr(0), 0, 0}},
	{"chroot", unix.SYS_CHROOT, [6]uintptr{0}},
	{"sethostname", unix.SYS_SETHOSTNAME, [6]uintptr{0, ^uintptr(0)}},
	{"vhangup", unix.SYS_VHANGUP, [6]uintptr{}},
	{"memfd_secret", unix.SYS_MEMFD_SECRET, [6]uintptr{^uintptr(0)}},
	{"listmount", unix.SYS_LISTMOUNT, [6]uintptr{0, 0, 0, ^uintptr(0)}},
}

// TestSyscallTableHelper is not a test: TestSeccompAllowListInTheKernel
// runs it in the sandbox. It prints THROUGH for each socket or call that
// got past the filter, and TABLE DONE at the end.
func TestSyscallTableHelper(t *testing.T) {
	if os.Getenv("ASK_SANDBOX_TEST_SYSCALLS") == "" {
		t.Skip("run by TestSeccompAllowListInTheKernel as a helper")
	}
	through := func(format string, a ...any) { fmt.Printf("THROUGH: "+format+"\n", a...) }
	protos := []int{0, unix.IPPROTO_TCP, unix.IPPROTO_UDP, unix.IPPROTO_SCTP, unix.IPPROTO_RAW, unix.NETLINK_AUDIT, unix.NETLINK_SOCK_DIAG}
	for family := 0; family < unix.AF_MAX; family++ {
		for _, typ := range socketTypes {
			for _, proto := range protos {
				fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), uintptr(typ|unix.SOCK_CLOEXEC), uintptr(proto))
				if e == 0 {
					unix.Close(int(fd))
				}
				if !socketAllowed(family, typ, proto) && e != unix.EACCES {
					through("socket(%d, %d, %d): %v", family, typ, proto, e)
				}
			}
			var pair [2]int32
			_, _, e := unix.RawSyscall6(unix.SYS_SOCKETPAIR, uintptr(family), uintptr(typ|unix.SOCK_CLOEXEC), 0, uintptr(unsafePointer(&pair)), 0, 0)
			if e == 0 {
				unix.Close(int(pair[0]))
				unix.Close(int(pair[1]))
			}
			ok := family == unix.AF_UNIX && (typ == unix.SOCK_STREAM || typ == unix.SOCK_SEQPACKET)
			switch {
			case ok && e != 0:
				fmt.Printf("BROKEN: socketpair(%d, %d): %v\n", family, typ, e)
			case !ok && e != unix.EACCES:
				through("socketpair(%d, %d): %v", family, typ, e)
			}
		}
	}
	refused := map[uintptr]bool{}
	for _, nr := range refusedSyscalls() {
		refused[uintptr(nr)] = true
	}
	for _, c := range refusedCalls {
		_, _, e := unix.Syscall6(c.nr, c.args[0], c.args[1], c.args[2], c.args[3], c.args[4], c.args[5])
		want := unix.ENOSYS
		if refused[c.nr] || c.nr == unix.SYS_UNSHARE || c.nr == unix.SYS_PTRACE {
			want = unix.EPERM
		}
		if e != want {
			through("%s: %v, want %v", c.name, e, want)
		}
	}
	// clone making namespaces, as a program starting a child would.
	for _, flag := range []uintptr{unix.CLONE_NEWUSER, unix.CLONE_NEWNET, unix.CLONE_NEWNS, unix.CLONE_NEWPID} {
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flag}
		if err := cmd.Run(); err == nil {
			through("clone with %#x", flag)
		}
	}
	fmt.Println("TABLE DONE")
}

func refusedSyscalls() []uint32 { return refused }

// Issue 37, item 3: the seccomp layer is an allow-list. In the kernel, in
// the sandbox with every layer and with seccomp alone: every socket
// family × type (× a few protocols) but those a build needs is refused,
// socketpair makes only UNIX stream and seqpacket pairs, and every system
// call the last two passes tried is refused with the filter's errno.
func TestSeccompAllowListInTheKernel(t *testing.T) {
	w := newWorld(t)
	self, _ := os.Executable()
	line := "ASK_SANDBOX_TEST_SYSCALLS=1 " + self + " -test.run='^TestSyscallTableHelper$'"
	for _, tc := range []struct {
		name    string
		without []Layer
	}{{"every layer", nil}, {"seccomp alone", only(LayerSeccomp)}} {
		p := w.policy(Workdir, false)
		p.Without = tc.without
		sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
		out, err := run(t, sb, w.workdir, line)
		if err != nil || !strings.Contains(out, "TABLE DONE") {
			t.Fatalf("%s: the table did not run: %v\n%s", tc.name, err, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "THROUGH:") || strings.HasPrefix(l, "BROKEN:") {
				t.Errorf("%s: %s", tc.name, l)
			}
		}
	}
}

// Issue 37, item 3, the real attack: socketpair(AF_UNIX, SOCK_RAW) gave a
// datagram pair, and sendto by path reached a host datagram socket
// (/dev/log, journald, $NOTIFY_SOCKET). Nothing arrives, with the network
// and without.
func TestDatagramToAHostSocket(t *testing.T) {
	w := newWorld(t)
	path := filepath.Join(w.outside, "log")
	host, err := net.ListenPacket("unixgram", path)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	os.Chmod(path, 0o777)
	os.Chmod(w.outside, 0o755)
	for _, network := range []bool{false, true} {
		p := w.policy(Workdir, network)
		sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
		ok, out := attack(t, sb, w.workdir, "dgram", path)
		host.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		buf := make([]byte, 64)
		n, _, rerr := host.ReadFrom(buf)
		if ok || rerr == nil {
			t.Errorf("network %v: a datagram reached the host socket (%q, attack says %v):\n%s", network, buf[:n], ok, out)
		}
	}
}

func unsafePointer(p *[2]int32) unsafe.Pointer { return unsafe.Pointer(p) }

// The allow-list keeps builds working: sh, git, python3 (threads,
// subprocesses, multiprocessing, sockets, asyncio), make, cc, node, and go
// build and go test, each in the workdir sandbox where this machine has it.
func TestBuildsWorkUnderTheAllowList(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: it runs compilers in the sandbox")
	}
	w := newWorld(t)
	p := w.policy(Workdir, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	files := map[string]string{
		"hello.c":      "#include <stdio.h>\n#include <pthread.h>\nstatic void *f(void *a) { return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0); puts(\"C-OK\"); return 0; }\n",
		"Makefile":     "all: hello\n\t./hello\nhello: hello.c\n\t$(CC) -pthread -o hello hello.c\n",
		"gomod/go.mod": "module example.com/m\n\ngo 1.21\n",
		"gomod/m.go":   "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"gomod/m_test.go": "package m\n\nimport (\"net\"; \"os/exec\"; \"testing\")\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 { t.Fatal(\"no\") }\n" +
			"\tln, err := net.Listen(\"tcp\", \"127.0.0.1:0\"); if err != nil { t.Fatal(err) }\n\tln.Close()\n" +
			"\tif err := exec.Command(\"true\").Run(); err != nil { t.Fatal(err) }\n}\n",
		"p.py": "import asyncio, multiprocessing, socket, subprocess, threading, tempfile\n" +
			"def sq(x): return x * x\n" +
			"if __name__ == '__main__':\n" +
			"    with multiprocessing.Pool(2) as pool: assert pool.map(sq, [1, 2]) == [1, 4]\n" +
			"    a, b = socket.socketpair(); a.send(b'x'); assert b.recv(1) == b'x'\n" +
			"    s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); s.close()\n" +
			"    socket.getaddrinfo('localhost', 80)\n" +
			"    t = threading.Thread(target=lambda: None); t.start(); t.join()\n" +
			"    subprocess.run(['true'], check=True)\n" +
			"    asyncio.run(asyncio.sleep(0))\n" +
			"    tempfile.TemporaryFile().close()\n" +
			"    print('PY-OK')\n",
		"n.js": "require('child_process').execFileSync('true'); require('net').createServer().listen(0, '127.0.0.1', function () { this.close(); console.log('NODE-OK') })\n",
	}
	os.Mkdir(filepath.Join(w.workdir, "gomod"), 0o755)
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(w.workdir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goBin, _ := exec.LookPath("go")
	for _, c := range []struct{ tool, script, want string }{
		{"sh", "a=$(echo x | tr x y) && test $a = y && (sleep 0 &) && wait && echo SH-OK", "SH-OK"},
		{"git", "git init -q g && cd g && echo a > a && " + gitAs + "add a && " + gitAs + "commit -qm a && git log --oneline | wc -l", "1"},
		{"python3", "python3 p.py", "PY-OK"},
		{"make", "make -s CC=cc", "C-OK"},
		{"node", "node n.js", "NODE-OK"},
		{"go", "cd gomod && GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local " + goBin + " build ./... && GOPROXY=off GOTOOLCHAIN=local " + goBin + " test -count=1 ./... && echo GO-OK", "GO-OK"},
	} {
		if _, err := exec.LookPath(c.tool); err != nil || c.tool != "sh" && exec.Command(c.tool, "--version").Run() != nil {
			t.Logf("no %s that runs here", c.tool)
			continue
		}
		out, err := run(t, sb, w.workdir, c.script)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%s in the sandbox: %v\n%s", c.tool, err, out)
		}
	}
}
