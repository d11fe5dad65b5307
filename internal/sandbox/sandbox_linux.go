package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The hidden entry points, as argv[1] of ask's own binary.
const (
	childArg = "__ask_sandbox_child" // POLICY-JSON REPORT-FD PATH ARGV...
	probeArg = "__ask_sandbox_probe" // exits 0: the namespaces could be made
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
	case probeArg:
		os.Exit(0)
	case childArg:
		os.Exit(child(os.Args[2:]))
	}
}

// start rewrites cmd to start self as the child, in new user and network
// namespaces unless the network is allowed.
func start(cmd *exec.Cmd, self string, p Policy, s Support, env []string) (*Job, error) {
	spec, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %v", err)
	}
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	cmd.Args = append([]string{self, childArg, string(spec), strconv.Itoa(fd), cmd.Path}, cmd.Args...)
	cmd.Path = self
	cmd.Env = env
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		copied := *cmd.SysProcAttr
		attr = &copied
	}
	if !p.AllowNetwork {
		attr.Cloneflags |= netFlags(s.Namespaces)
		if s.Namespaces == "user+net" {
			// The same ids inside: files keep their owners, and nothing
			// gains a privilege it did not have.
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		}
	}
	cmd.SysProcAttr = attr
	return &Job{r: r, w: w}, nil
}

func netFlags(namespaces string) uintptr {
	switch namespaces {
	case "user+net":
		return syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
	case "net":
		return syscall.CLONE_NEWNET
	}
	return 0
}

func check() Support {
	var s Support
	s.LandlockABI, s.FileSystem = landlockABI()
	s.Namespaces, s.Network = probeNamespaces()
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

// probeNamespaces starts ask's own binary, which exits at once, in new user
// and network namespaces; as root, a network namespace alone will also do.
func probeNamespaces() (namespaces, problem string) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Sprintf("cannot find ask's own program: %v", err)
	}
	try := func(ns string) error {
		cmd := exec.Command(self, probeArg)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: netFlags(ns)}
		if ns == "user+net" {
			cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
			cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		}
		return cmd.Run()
	}
	userErr := try("user+net")
	if userErr == nil {
		return "user+net", ""
	}
	if os.Geteuid() == 0 && try("net") == nil {
		return "net", ""
	}
	why := userErr.Error()
	if errors.Is(userErr, syscall.EPERM) || errors.Is(userErr, syscall.EACCES) || errors.Is(userErr, syscall.ENOSPC) {
		why = "user namespaces are not allowed here (see the sysctls user.max_user_namespaces, kernel.unprivileged_userns_clone and kernel.apparmor_restrict_unprivileged_userns, or the container's seccomp profile)"
	}
	return "", "cannot make a new user and network namespace: " + why
}

// child confines this process as the policy says and executes the
// command. args are POLICY-JSON REPORT-FD PATH ARGV... A failure before
// the command runs is written to the report pipe, which the exec closes.
func child(args []string) int {
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
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		return fail(fmt.Errorf("the policy given to the sandbox's child is not valid: %v", err))
	}
	if !p.AllowNetwork {
		// In a network namespace of its own, loopback is down: bring it up
		// so that tests can listen on 127.0.0.1. Nothing outside is reachable
		// either way, so a failure here only keeps more out.
		loopbackUp()
	}
	if err := restrict(p); err != nil {
		return fail(err)
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
