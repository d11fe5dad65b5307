package sandbox

import (
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// nsClone are the flags that make namespaces: a command makes none, and so
// no user namespace in which it would hold capabilities again.
const nsClone = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// modeBits are the modes no command sets: set-user-ID and set-group-ID, and
// write for everyone (chmod 777 of a key's directory, 666 of the key).
// Group write is left alone: umask 002 and the tarballs made under it use
// it all the time.
const modeBits = unix.S_ISUID | unix.S_ISGID | 0o002

// refused are the system calls no command makes, refused with EPERM
// whatever their arguments: kernel keyrings, mounts, namespaces joined,
// another process's memory or descriptors, io_uring (whose operations no
// filter sees), and the kernel's own attack surface, which no build needs.
var refused = []uint32{
	unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
	unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_OPEN_TREE_ATTR, unix.SYS_MOUNT_SETATTR,
	unix.SYS_SETNS, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
}

// The offsets of struct seccomp_data's fields.
const (
	dataNr   = 0
	dataArch = 4
	dataArgs = 16
)

// argLow loads the low 32 bits of a syscall argument (little-endian). Only
// the low half is ever compared: the kernel reads these arguments (modes,
// flags, ioctl requests, socket families) as 32-bit values, so a high half
// set would slip past a 64-bit comparison.
func argLow(n uint32) bpf.Instruction {
	return bpf.LoadAbsolute{Off: dataArgs + 8*n, Size: 4}
}

var (
	eperm  = bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}
	eacces = bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)}
	enosys = bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)}
	// pretend is success without the call: chown of a file to the owner it
	// has would be refused, and tar and cp -a, as root, would fail on it.
	pretend = bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO}
)

// filter is the seccomp layer: it allows only the calls listed in allowed
// and archAllowed (ENOSYS for any other), and of those refuses, whatever
// the file or process: the refused calls; modes that open a file up;
// ptrace attaching to a process; namespaces made; typing into a terminal
// (TIOCSTI, TIOCLINUX); sockets but those socketBody and socketpairBody
// let through. Owners never change, but chown pretends to succeed. A call
// of another architecture's ABI, which none of this names, kills the
// process.
func filter() []bpf.Instruction {
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: dataArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: filterArch, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
	}
	if x32Bit != 0 {
		// x86-64's x32 ABI numbers its calls apart: refuse them all.
		prog = append(prog, bpf.LoadAbsolute{Off: dataNr, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipFalse: 1},
			enosys)
	}
	// Each block loads the call's number afresh, runs its body for that
	// call only, and otherwise goes on to the next block; a body that does
	// not return falls through to the next block.
	block := func(nr uint32, body ...bpf.Instruction) {
		prog = append(prog, bpf.LoadAbsolute{Off: dataNr, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: uint8(len(body))})
		prog = append(prog, body...)
	}
	for _, nr := range refused {
		block(nr, eperm)
	}
	modeArg := func(nr, arg uint32) {
		block(nr, argLow(arg), bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: modeBits, SkipFalse: 1}, eperm)
	}
	modeArg(unix.SYS_FCHMOD, 1)
	modeArg(unix.SYS_FCHMODAT, 2)
	modeArg(unix.SYS_FCHMODAT2, 2)
	for _, nr := range []uint32{unix.SYS_UNSHARE, unix.SYS_CLONE} {
		block(nr, argLow(0), bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: nsClone, SkipFalse: 1}, eperm)
	}
	block(unix.SYS_PTRACE, argLow(0),
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.PTRACE_ATTACH, SkipTrue: 1},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.PTRACE_SEIZE, SkipFalse: 1},
		eperm)
	block(unix.SYS_IOCTL, argLow(1),
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCSTI, SkipTrue: 1},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCLINUX, SkipFalse: 1},
		eperm)
	block(unix.SYS_SOCKET, socketBody()...)
	block(unix.SYS_SOCKETPAIR, socketpairBody()...)
	for _, nr := range []uint32{unix.SYS_FCHOWN, unix.SYS_FCHOWNAT} {
		block(nr, pretend)
	}
	for _, c := range legacyCalls {
		if c.chmod {
			modeArg(c.nr, 1)
		} else {
			block(c.nr, pretend)
		}
	}
	// What is left is allowed only when listed.
	prog = append(prog, bpf.LoadAbsolute{Off: dataNr, Size: 4})
	for _, nr := range slices.Concat(allowed, archAllowed) {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: 1},
			bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	}
	return append(prog, enosys)
}

// The socket families and types a command may make: TCP, UDP and ping
// over IPv4 and IPv6, and routing netlink (getaddrinfo asks it which
// addresses the machine has; in the sandbox's network namespace it sees
// only loopback, and changes nothing without capabilities). A UNIX socket
// only as a stream or seqpacket pair (socketpair), between the command's
// own processes: none by a path, no datagram pair that could send to one.
var (
	inetTypes  = []uint32{unix.SOCK_STREAM, unix.SOCK_DGRAM}
	inetProtos = []uint32{0, unix.IPPROTO_TCP, unix.IPPROTO_UDP, unix.IPPROTO_ICMP, unix.IPPROTO_ICMPV6}
	pairTypes  = []uint32{unix.SOCK_STREAM, unix.SOCK_SEQPACKET}
)

// sockTypeMask keeps a socket type's own bits, without SOCK_NONBLOCK and
// SOCK_CLOEXEC.
const sockTypeMask = 0xf

// oneOf jumps past the following return when A is one of vals: the body of
// a check that refuses unless A is one of them.
func oneOf(vals []uint32, refuse bpf.Instruction) []bpf.Instruction {
	var out []bpf.Instruction
	for i, v := range vals {
		// Past the remaining comparisons and the refusal.
		out = append(out, bpf.JumpIf{Cond: bpf.JumpEqual, Val: v, SkipTrue: uint8(len(vals) - i)})
	}
	return append(out, refuse)
}

// socketBody lets socket(2) through (to the allow-list) for the families,
// types and protocols above; anything else fails with EACCES.
func socketBody() []bpf.Instruction {
	inet := slices.Concat(
		[]bpf.Instruction{argLow(1), bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask}},
		oneOf(inetTypes, eacces),
		[]bpf.Instruction{argLow(2)},
		oneOf(inetProtos, eacces))
	netlink := slices.Concat([]bpf.Instruction{argLow(2)}, oneOf([]uint32{unix.NETLINK_ROUTE}, eacces))
	// family: AF_INET or AF_INET6 go to inet, AF_NETLINK to netlink.
	head := []bpf.Instruction{
		argLow(0),
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_INET, SkipTrue: 3},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_INET6, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_NETLINK, SkipTrue: uint8(1 + len(inet) + 1)},
		eacces,
	}
	// After inet's checks pass, jump over netlink's.
	inet = append(inet, bpf.Jump{Skip: uint32(len(netlink))})
	return slices.Concat(head, inet, netlink)
}

// socketpairBody lets socketpair(2) through only for a UNIX stream or
// seqpacket pair.
func socketpairBody() []bpf.Instruction {
	return slices.Concat(
		[]bpf.Instruction{argLow(0)},
		oneOf([]uint32{unix.AF_UNIX}, eacces),
		[]bpf.Instruction{argLow(1), bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask}},
		oneOf(pairTypes, eacces))
}

// legacyCall is a call older architectures keep beside its *at form.
type legacyCall struct {
	nr    uint32
	chmod bool // a chmod (else a chown)
}

// loadSeccomp installs the filter on every thread of this process; the
// command inherits it, and no_new_privs, across exec.
func loadSeccomp() error {
	if p := seccompProblem(); p != "" {
		return fmt.Errorf("%s", p)
	}
	raw, err := bpf.Assemble(filter())
	if err != nil {
		return fmt.Errorf("assembling the seccomp filter: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	prog := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		prog[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return fmt.Errorf("installing the seccomp filter: %w", e)
	}
	return nil
}

// seccompProblem is why no filter can be loaded here, "" when one can.
func seccompProblem() string {
	if filterArch == 0 {
		return fmt.Sprintf("the filter knows no %s", runtime.GOARCH)
	}
	// The kernel tells whether it takes the filter's strongest action;
	// one without seccomp filters has no seccomp call at all.
	action := uint32(unix.SECCOMP_RET_KILL_PROCESS)
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); e != 0 {
		return "this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)"
	}
	return ""
}
