package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The hidden entry points, as argv[1] of ask's own binary.
const (
	childArg = "__ask_sandbox_child" // POLICY-JSON REPORT-FD PATH ARGV...
	probeArg = "__ask_sandbox_probe" // exits 0: the namespaces could be made and used
	trialArg = "__ask_sandbox_trial" // exits 0: the command a trial run confines
)

// childFailed is the exit code of a child that could not confine itself;
// the parent tells a refusal by the report pipe, not by this code.
const childFailed = 125

// Main is the hidden entry point of the sandbox's child. Call it first
// thing in main, and in TestMain of any package whose tests confine
// commands (the child is the test binary then). When this process is not a
// sandbox child it returns at once; otherwise it never returns.
func Main() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case scratchArg:
		if err := scratchMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case trialArg:
		os.Exit(0) // confined, and so a command can be
	case probeArg:
		if err := probeInside(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case childArg:
		os.Exit(child(os.Args[2:], false))
	case execArg:
		os.Exit(child(os.Args[2:], true))
	case reaperArg:
		// Not os.Exit: a race-detecting build sleeps a second there,
		// while what the command left behind lives on (PID 1's exit
		// ends it).
		syscall.Exit(reaperMain(os.Args[2:]))
	}
}

// nsFlags are the namespaces a confined command gets: how is Support's
// Namespaces ("user", or "root" for root without user namespaces).
func nsFlags(how string, network bool) uintptr {
	f := uintptr(syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS)
	if how == "user" {
		f |= syscall.CLONE_NEWUSER
	}
	if !network {
		f |= syscall.CLONE_NEWNET
	}
	return f
}

// nsAttr starts a process in the namespaces, in a session of its own (so
// without a controlling terminal), killed if ask dies first.
func nsAttr(attr *syscall.SysProcAttr, how string, network bool) {
	attr.Cloneflags |= nsFlags(how, network)
	if how == "user" {
		// The same ids inside: files keep their owners, and nothing gains a
		// privilege it did not have.
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		// Executing ask again would cost a user other than root the
		// capabilities the new namespace gave it: keep those the child
		// needs to set up, which it drops before the command runs.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP, unix.CAP_SYS_RESOURCE}
	}
	// A session leader leads its own group too: killing the group by the
	// child's pid still works, and the PID namespace takes the rest.
	attr.Setsid, attr.Setpgid, attr.Pgid, attr.Setctty, attr.Foreground = true, false, 0, false, false
	attr.Pdeathsig = syscall.SIGKILL
}

// start rewrites cmd to start self as the child, in the sandbox's
// namespaces.
func start(cmd *exec.Cmd, self string, p Policy, s Support, env []string, scratch *os.File, proxy *Proxy) (*Job, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %v", err)
	}
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	cs := childSpec{Policy: p}
	if scratch != nil {
		cs.ScratchFD = 3 + len(cmd.ExtraFiles)
		cmd.ExtraFiles = append(cmd.ExtraFiles, scratch)
	}
	var bridge *os.File
	if proxy != nil && !p.AllowNetwork && !p.without(LayerNamespaces) {
		if bridge, err = bridgePair(proxy); err != nil {
			r.Close()
			w.Close()
			return nil, err
		}
		cs.ProxyFD = 3 + len(cmd.ExtraFiles)
		cmd.ExtraFiles = append(cmd.ExtraFiles, bridge)
	}
	spec, err := json.Marshal(cs)
	if err != nil {
		r.Close()
		w.Close()
		if bridge != nil {
			bridge.Close()
		}
		return nil, err
	}
	cmd.Args = append([]string{self, childArg, string(spec), strconv.Itoa(fd), cmd.Path}, cmd.Args...)
	cmd.Path = self
	cmd.Env = env
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		copied := *cmd.SysProcAttr
		attr = &copied
	}
	if !p.without(LayerNamespaces) {
		// With --allow-host the network namespace stays, and ask's proxy
		// is bridged in (bridge): the child's init serves it on the
		// namespace's loopback. The command itself still makes no UNIX
		// socket (seccomp).
		nsAttr(attr, s.Namespaces, p.AllowNetwork)
	}
	cmd.SysProcAttr = attr
	job := &Job{r: r, w: w, bridge: bridge, cmd: cmd}
	if p.Level == Workdir && !p.without(LayerNamespaces) {
		prepareGit(p.Workdir)
		job.git = gitDirs(p.Workdir)
	}
	return job, nil
}

// awaitExit waits until process pid has exited, without reaping it: the
// sandbox's init, whose exit the kernel completes only once every process
// of its PID namespace has gone.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone and reaped already
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// childSpec is what the child is told: the policy, and the descriptors of
// the run's scratch file system and of the proxy's bridge (0: none).
type childSpec struct {
	Policy
	ScratchFD int `json:"scratch_fd,omitempty"`
	ProxyFD   int `json:"proxy_fd,omitempty"`
	// GitDirs are the working directory's git directories as isolate
	// found them, which the init sweeps once the command has ended.
	GitDirs []gitDir `json:"git_dirs,omitempty"`
}

func check() Support {
	var s Support
	s.LandlockABI, s.FileSystem = landlockABI()
	s.Namespaces, s.NamespacesProblem, s.Network = probeNamespaces()
	if s.Namespaces != "" {
		s.Scratch = probeScratch(s.Namespaces)
	}
	s.Seccomp = seccompProblem()
	return s
}

// landlockABI is the kernel's Landlock ABI version, as go-landlock will use
// it, or why there is none that will do.
func landlockABI() (int, string) {
	v, err := llsys.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return 0, "this kernel has no Landlock (it needs Linux 6.2 or later, built with CONFIG_SECURITY_LANDLOCK)"
	case errors.Is(err, syscall.EOPNOTSUPP):
		return 0, "Landlock is disabled in this kernel (add landlock to the lsm= boot parameter)"
	case err != nil:
		return 0, fmt.Sprintf("Landlock cannot be queried: %v", err)
	}
	if v >= 6 {
		// go-landlock treats ABI 6 and later without the fix for the
		// signal scoping bug as ABI 5: ask for no more than it grants.
		if errata, err := llsys.LandlockGetErrata(); err != nil || errata&0x2 == 0 {
			v = 5
		}
	}
	if v < MinLandlockABI {
		return v, fmt.Sprintf("Landlock ABI %d is too old: a read-only file could still be truncated before ABI %d (Linux 6.2)", v, MinLandlockABI)
	}
	return v, ""
}

// probeNamespaces starts ask's own binary in the sandbox's namespaces,
// where it sets up what a child would (a private mount tree, /proc) and
// exits; then once more with a network namespace. As root, namespaces
// without a user namespace will also do: capabilities are dropped either
// way.
func probeNamespaces() (how, problem, network string) {
	self, err := os.Executable()
	if err != nil {
		why := fmt.Sprintf("cannot find ask's own program: %v", err)
		return "", why, why
	}
	try := func(how string, network bool) error {
		cmd := exec.Command(self, probeArg)
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		nsAttr(cmd.SysProcAttr, how, network)
		out, err := cmd.CombinedOutput()
		if msg := strings.TrimSpace(string(out)); err != nil && msg != "" {
			return errors.New(msg)
		}
		return err
	}
	userErr := try("user", true)
	switch {
	case userErr == nil:
		how = "user"
	case os.Geteuid() == 0 && try("root", true) == nil:
		how = "root"
	default:
		why := userErr.Error()
		if errors.Is(userErr, syscall.EPERM) || errors.Is(userErr, syscall.EACCES) || errors.Is(userErr, syscall.ENOSPC) {
			why = "user namespaces are not allowed here (see the sysctls user.max_user_namespaces, kernel.unprivileged_userns_clone and kernel.apparmor_restrict_unprivileged_userns, or the container's seccomp profile)"
		}
		why = "cannot make new user, mount, PID and IPC namespaces: " + why
		return "", why, why
	}
	if err := try(how, false); err != nil {
		network = "cannot make a new network namespace: " + err.Error()
	}
	return how, "", network
}

// probeInside checks, in the new namespaces, what the child will need;
// with "scratch", that it can mount the scratch file system (descriptor 3).
func probeInside(args []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("cannot make the mount tree private: %w", err)
	}
	if len(args) > 0 && args[0] == "scratch" {
		dir, err := os.MkdirTemp("", "ask-probe-")
		if err != nil {
			return err
		}
		defer os.Remove(dir)
		err = mountScratch(3, dir)
		unix.Unmount(dir, unix.MNT_DETACH)
		return err
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("cannot mount /proc for the new PID namespace: %w", err)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("cannot make the system read-only (mount_setattr needs Linux 5.12): %w", err)
	}
	return nil
}

// child confines this process as the policy says and executes the
// command. args are POLICY-JSON REPORT-FD PATH ARGV... A failure before
// the command runs is written to the report pipe, which the exec closes.
// In new namespaces the first stage sets them up and stays as their init
// (initMain), which starts the second (second) to confine itself further
// and execute the command.
// layersMayBeLeftOut is set by this package's tests alone, which show that
// each layer holds without the others; a policy of ask itself never leaves
// one out.
var layersMayBeLeftOut bool

func child(args []string, second bool) int {
	// Capabilities belong to a thread: the one that drops them executes
	// the command.
	runtime.LockOSThread()
	if len(args) < 4 {
		fmt.Fprintln(os.Stderr, "ask: the sandbox's child was started without its command")
		return childFailed
	}
	fd, err := strconv.Atoi(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "ask: the sandbox's child was started without its report pipe")
		return childFailed
	}
	syscall.CloseOnExec(fd)
	report := os.NewFile(uintptr(fd), "sandbox report")
	fail := func(err error) int {
		fmt.Fprintf(report, "%v", err)
		return childFailed
	}
	var cs childSpec
	if err := json.Unmarshal([]byte(args[0]), &cs); err != nil {
		return fail(fmt.Errorf("the policy given to the sandbox's child is not valid: %v", err))
	}
	p := cs.Policy
	if (len(p.Without) > 0 || len(p.Break) > 0) && !layersMayBeLeftOut {
		return fail(errors.New("a layer of the sandbox can be left out only in ask's own tests"))
	}
	if !p.without(LayerNamespaces) && !second {
		git, err := isolate(p, cs.ScratchFD)
		if err == nil && p.broken(LayerNamespaces) {
			err = fmt.Errorf("cannot mount /proc for the new PID namespace: %w (broken by a test)", unix.EPERM)
		}
		if err != nil {
			return fail(fmt.Errorf("the namespaces layer failed: %w", err))
		}
		cs.GitDirs = git
		return initMain(cs, report, args[2], args[3:])
	}
	if err := limit(p); err != nil {
		return fail(err)
	}
	if !p.without(LayerLandlock) {
		err := restrict(p)
		if p.broken(LayerLandlock) {
			err = fmt.Errorf("landlock_restrict_self: %w (broken by a test)", unix.EPERM)
		}
		if err != nil {
			return fail(fmt.Errorf("cannot confine the file system (the landlock layer): %w", err))
		}
	}
	if !p.without(LayerSeccomp) {
		err := loadSeccomp()
		if p.broken(LayerSeccomp) {
			err = fmt.Errorf("installing the seccomp filter: %w (broken by a test)", unix.EINVAL)
		}
		if err != nil {
			return fail(fmt.Errorf("cannot filter system calls (the seccomp layer): %w", err))
		}
	}
	if err := dropCapabilities(); err != nil {
		return fail(fmt.Errorf("cannot drop capabilities: %w", err))
	}
	// Whatever ask inherited and did not mean to pass on stays out.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fail(fmt.Errorf("cannot close the descriptors above 2: %w", err))
	}
	path, argv := args[2], args[3:]
	err = syscall.Exec(path, argv, os.Environ())
	// Still here: the command never ran. That is no refusal by the
	// sandbox (unless Landlock denied executing it), so say it as a shell
	// would.
	fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
	if errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}

func loopbackUp() {
	sock, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(sock)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return
	}
	if unix.IoctlIfreq(sock, unix.SIOCGIFFLAGS, ifr) != nil {
		return
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	unix.IoctlIfreq(sock, unix.SIOCSIFFLAGS, ifr)
}

// limit caps the number of processes (threads count) the command may
// have. RLIMIT_NPROC is counted per user namespace, but spares root; the
// PID namespace's own pid_max (Linux 6.14, set by isolate) holds for root
// too.
func limit(p Policy) error {
	n := p.maxProcesses()
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: uint64(n), Max: uint64(n)}); err != nil {
		return fmt.Errorf("cannot limit the number of processes: %w", err)
	}
	return nil
}

// dropCapabilities leaves this thread, and what it executes, no
// capability: not in the new user namespace, and not as root without one.
func dropCapabilities() error {
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	for c := 0; c <= 63; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the last capability this kernel knows
		}
		// EPERM: no CAP_SETPCAP, so no capability to drop either (checked
		// below); no_new_privs keeps set-user-ID programs from adding any.
	}
	// Root, or uid 0 in the user namespace, gains nothing by executing.
	// linux/securebits.h: NOROOT, NO_SETUID_FIXUP, KEEP_CAPS (locked) and
	// NO_CAP_AMBIENT_RAISE, each with its lock.
	const bits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7
	unix.Prctl(unix.PR_SET_SECUREBITS, bits, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return err
	}
	var got [2]unix.CapUserData
	if err := unix.Capget(&hdr, &got[0]); err != nil {
		return err
	}
	if got != none {
		return errors.New("some capabilities remain")
	}
	return nil
}
