package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData is struct seccomp_data as a filter sees it on a
// little-endian machine: each 32-bit load gives the native word, the low
// half of an argument first. The interpreter loads words big-endian, as
// from a packet, so each word is written so.
func seccompData(arch, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[dataNr:], nr)
	binary.BigEndian.PutUint32(b[dataArch:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[dataArgs+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[dataArgs+8*i+4:], uint32(a>>32))
	}
	return b
}

// The filter, run in a BPF interpreter, gives each call the verdict the
// layer promises; the attacks in layers_test.go show the kernel agrees.
func TestSeccompFilterVerdicts(t *testing.T) {
	t.Parallel()
	if filterArch == 0 {
		t.Skip("no seccomp filter for this architecture")
	}
	vm, err := bpf.NewVM(filter())
	if err != nil {
		t.Fatalf("the filter does not assemble: %v", err)
	}
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		kill   = unix.SECCOMP_RET_KILL_PROCESS
		perm   = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		access = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		nosys  = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		fake   = unix.SECCOMP_RET_ERRNO
		high   = uint64(0xdead) << 32 // set in the half the kernel ignores
	)
	type call struct {
		what string
		nr   uint32
		args []uint64
		want uint32
	}
	cases := []call{
		{"read", unix.SYS_READ, nil, allow},
		{"openat", unix.SYS_OPENAT, []uint64{0, 0, unix.O_RDWR | unix.O_CREAT}, allow},
		{"fchmodat 0644", unix.SYS_FCHMODAT, []uint64{0, 0, 0o644}, allow},
		{"fchmodat 0775", unix.SYS_FCHMODAT, []uint64{0, 0, 0o775}, allow},
		{"fchmodat 0777", unix.SYS_FCHMODAT, []uint64{0, 0, 0o777}, perm},
		{"fchmodat setuid", unix.SYS_FCHMODAT, []uint64{0, 0, 0o4755}, perm},
		{"fchmodat setuid, high half set", unix.SYS_FCHMODAT, []uint64{0, 0, high | 0o4755}, perm},
		{"fchmodat2 setgid", unix.SYS_FCHMODAT2, []uint64{0, 0, 0o2755, 0}, perm},
		{"fchmod 0666", unix.SYS_FCHMOD, []uint64{3, 0o666}, perm},
		{"fchmod 0600", unix.SYS_FCHMOD, []uint64{3, 0o600}, allow},
		{"clone a process", unix.SYS_CLONE, []uint64{uint64(unix.SIGCHLD)}, allow},
		{"clone a thread", unix.SYS_CLONE, []uint64{unix.CLONE_VM | unix.CLONE_THREAD | unix.CLONE_SIGHAND}, allow},
		{"clone a network namespace", unix.SYS_CLONE, []uint64{unix.CLONE_NEWNET | uint64(unix.SIGCHLD)}, perm},
		{"unshare a user namespace", unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWUSER}, perm},
		{"unshare a mount namespace, high half set", unix.SYS_UNSHARE, []uint64{high | unix.CLONE_NEWNS}, perm},
		{"unshare files", unix.SYS_UNSHARE, []uint64{unix.CLONE_FILES}, allow},
		{"ptrace attach", unix.SYS_PTRACE, []uint64{unix.PTRACE_ATTACH, 1}, perm},
		{"ptrace seize", unix.SYS_PTRACE, []uint64{unix.PTRACE_SEIZE, 1}, perm},
		{"ptrace traceme", unix.SYS_PTRACE, []uint64{unix.PTRACE_TRACEME}, allow},
		{"ioctl TIOCSTI", unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI}, perm},
		{"ioctl TIOCSTI, high half set", unix.SYS_IOCTL, []uint64{0, high | unix.TIOCSTI}, perm},
		{"ioctl TIOCLINUX", unix.SYS_IOCTL, []uint64{0, unix.TIOCLINUX}, perm},
		{"ioctl TCGETS", unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, allow},
		{"socket AF_UNIX", unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, access},
		{"socket AF_UNIX, high half set", unix.SYS_SOCKET, []uint64{high | unix.AF_UNIX, unix.SOCK_STREAM}, access},
		{"socket AF_INET", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, 0}, allow},
		{"socketpair stream", unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_STREAM | unix.SOCK_CLOEXEC}, allow},
		{"socketpair datagram", unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC}, access},
		{"socketpair raw (a datagram pair)", unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_RAW}, access},
		{"socketpair seqpacket", unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_SEQPACKET | unix.SOCK_NONBLOCK}, allow},
		{"socketpair AF_INET", unix.SYS_SOCKETPAIR, []uint64{unix.AF_INET, unix.SOCK_STREAM}, access},
		{"socket AF_INET6 datagram", unix.SYS_SOCKET, []uint64{unix.AF_INET6, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, 0}, allow},
		{"socket AF_INET ping", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP}, allow},
		{"socket AF_INET raw", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_RAW}, access},
		{"socket AF_INET SCTP", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP}, access},
		{"socket AF_NETLINK route", unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE}, allow},
		{"socket AF_NETLINK audit", unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT}, access},
		{"socket AF_PACKET", unix.SYS_SOCKET, []uint64{unix.AF_PACKET, unix.SOCK_RAW, 0}, access},
		{"socket AF_ALG", unix.SYS_SOCKET, []uint64{unix.AF_ALG, unix.SOCK_SEQPACKET, 0}, access},
		{"socket AF_VSOCK", unix.SYS_SOCKET, []uint64{unix.AF_VSOCK, unix.SOCK_STREAM, 0}, access},
		{"an unlisted call: kexec_load", unix.SYS_KEXEC_LOAD, nil, nosys},
		{"an unlisted call: init_module", unix.SYS_INIT_MODULE, nil, nosys},
		{"an unlisted call: open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT, nil, nosys},
		{"an unknown number", 1000, nil, nosys},
		{"fchownat", unix.SYS_FCHOWNAT, []uint64{0, 0, 0, 0}, fake},
		{"fchown", unix.SYS_FCHOWN, []uint64{3, 0, 0}, fake},
	}
	for _, nr := range refused {
		cases = append(cases, call{"refused call", nr, nil, perm})
	}
	for _, c := range legacyCalls {
		if c.chmod {
			cases = append(cases, call{"chmod 0777", c.nr, []uint64{0, 0o777}, perm}, call{"chmod 0755", c.nr, []uint64{0, 0o755}, allow})
		} else {
			cases = append(cases, call{"chown", c.nr, nil, fake})
		}
	}
	if x32Bit != 0 {
		cases = append(cases, call{"an x32 call", x32Bit | unix.SYS_READ, nil, nosys},
			call{"an x32 keyctl", x32Bit | unix.SYS_KEYCTL, nil, nosys})
	}
	for _, c := range cases {
		got, err := vm.Run(seccompData(filterArch, c.nr, c.args...))
		if err != nil {
			t.Fatalf("%s (%d): %v", c.what, c.nr, err)
		}
		if uint32(got) != c.want {
			t.Errorf("%s (call %d, args %#x): verdict %#x, want %#x", c.what, c.nr, c.args, uint32(got), c.want)
		}
	}
	// Another architecture's ABI, whose numbers mean other calls.
	for _, arch := range []uint32{unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_ARM, unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_AARCH64} {
		if arch == filterArch {
			continue
		}
		if got, _ := vm.Run(seccompData(arch, unix.SYS_READ)); uint32(got) != kill {
			t.Errorf("a call of ABI %#x: verdict %#x, want kill %#x", arch, uint32(got), kill)
		}
	}
}
