package sandbox

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func errno(e syscall.Errno) seccomp.Action { return seccomp.ActionErrno | seccomp.Action(e) }

// nsClone are the flags that make namespaces: a command makes none, and so
// no user namespace in which it would hold capabilities again.
const nsClone = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// modeBits are the modes no command sets: set-user-ID and set-group-ID, and
// write for everyone (chmod 777 of a key's directory, 666 of the key).
// Group write is left alone: umask 002 and the tarballs made under it use
// it all the time.
const modeBits = unix.S_ISUID | unix.S_ISGID | 0o002

// filterPolicy is what the seccomp filter refuses, with EPERM, whatever
// the file or process: modes that open a file up, kernel keyrings, mounts,
// namespaces, io_uring (whose operations no filter sees), ptrace attaching
// to a process and reading or writing another's memory. Owners never
// change either, but chown pretends to succeed: tar and cp -a, as root,
// give the owner they already have, and would fail on EPERM.
func filterPolicy() seccomp.Policy {
	mode := func(name string, arg uint32) seccomp.NameWithConditions {
		return seccomp.NameWithConditions{Name: name, Conditions: seccomp.ArgumentConditions{
			{Argument: arg, Operation: seccomp.BitsSet, Value: modeBits}}}
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{{
			Action: errno(unix.EPERM),
			Names: []string{
				"add_key", "request_key", "keyctl",
				"mount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick",
				"move_mount", "open_tree", "open_tree_attr", "mount_setattr",
				"setns", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
				"io_uring_setup", "io_uring_enter", "io_uring_register",
				// The kernel's own attack surface, which no build needs.
				"bpf", "perf_event_open", "userfaultfd",
			},
			NamesWithCondtions: []seccomp.NameWithConditions{
				mode("chmod", 1), mode("fchmod", 1), mode("fchmodat", 2), mode("fchmodat2", 2),
				{Name: "ptrace", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: unix.PTRACE_ATTACH}}},
				{Name: "ptrace", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: unix.PTRACE_SEIZE}}},
				{Name: "unshare", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: nsClone}}},
				{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: nsClone}}},
			},
		}},
	}
}

// The offsets of struct seccomp_data's fields.
const (
	dataNr   = 0
	dataArch = 4
	dataArgs = 16
)

// argLow loads the low 32 bits of a syscall argument (little-endian).
func argLow(n uint32) bpf.Instruction {
	return bpf.LoadAbsolute{Off: dataArgs + 8*n, Size: 4}
}

// wordFilter is the part go-seccomp-bpf cannot say. The kernel reads some
// arguments as 32-bit ints, so only their low half may be compared (a high
// half set would slip past a 64-bit comparison): it refuses TIOCSTI and
// TIOCLINUX (typing into a terminal) and UNIX sockets (a host daemon's
// socket by its path; socketpair's stream pairs still work). It makes
// chown pretend to succeed (the library's errno action is never 0). And
// it kills any syscall of another architecture's ABI, which no rule here
// names.
func wordFilter(a *arch.Info) []bpf.Instruction {
	eperm := bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}
	eacces := bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: dataArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(a.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
	}
	// Each block loads the syscall's number afresh, runs its body for that
	// syscall only, and otherwise goes on to the next block.
	block := func(name string, body ...bpf.Instruction) {
		nr, ok := a.SyscallNames[name]
		if !ok {
			return // not on this architecture
		}
		prog = append(prog, bpf.LoadAbsolute{Off: dataNr, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(nr), SkipFalse: uint8(len(body))})
		prog = append(prog, body...)
	}
	block("ioctl", argLow(1),
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCSTI, SkipTrue: 1},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCLINUX, SkipFalse: 1},
		eperm)
	block("socket", argLow(0),
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_UNIX, SkipFalse: 1},
		eacces)
	// A datagram pair may still send to a socket by its path.
	block("socketpair", argLow(1),
		bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SOCK_DGRAM, SkipFalse: 1},
		eacces)
	for _, name := range []string{"chown", "fchown", "lchown", "fchownat"} {
		block(name, bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO})
	}
	return append(prog, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
}

// loadSeccomp installs both filters on every thread of this process; the
// command inherits them, and no_new_privs, across exec.
func loadSeccomp() error {
	a, err := arch.GetInfo("")
	if err != nil {
		return err
	}
	policy := filterPolicy()
	insts, err := policy.Assemble()
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	for _, prog := range [][]bpf.Instruction{wordFilter(a), insts} {
		if err := install(prog); err != nil {
			return err
		}
	}
	return nil
}

func install(prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return e
	}
	return nil
}

// seccompProblem is why no filter can be loaded here, "" when one can.
func seccompProblem() string {
	if _, err := arch.GetInfo(""); err != nil {
		return fmt.Sprintf("the filter knows no %s: %v", runtime.GOARCH, err)
	}
	if !seccomp.Supported() {
		return "this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)"
	}
	policy := filterPolicy()
	if _, err := policy.Assemble(); err != nil {
		return fmt.Sprintf("the filter cannot be built for this machine: %v", err)
	}
	return ""
}
