package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// execArg is the second stage of the child: started by the sandbox's init
// (PID 1 of the new namespaces) once the namespaces are set up, it confines
// itself with the other layers and executes the command. POLICY-JSON
// REPORT-FD PATH ARGV...
const execArg = "__ask_sandbox_exec"

// proxyVars name ask's proxy in the command's environment; NO_PROXY is
// dropped, so that nothing tries to go around it.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

func isProxyVar(name string) bool {
	switch name {
	case "NO_PROXY", "no_proxy":
		return true
	}
	for _, v := range proxyVars {
		if v == name {
			return true
		}
	}
	return false
}

// initMain is PID 1 of the sandbox's namespaces, set up (isolate) and not
// yet confined further. It drops every capability and becomes the reaper
// (reaperMain), which starts the command through the second stage, passes
// on the signals it gets, reaps orphans, relays the proxy's bridge when
// there is one, and exits as the command does. A command run as PID 1
// itself would ignore every signal it has no handler for, and leave its
// orphans unreaped.
func initMain(cs childSpec, report *os.File, path string, argv []string) int {
	fail := func(err error) int {
		fmt.Fprintf(report, "%v", err)
		return childFailed
	}
	env := os.Environ()
	lnFD := -1
	if cs.ProxyFD > 0 {
		// The command's only way out: a port on the namespace's own
		// loopback, each connection handed to ask's proxy outside over
		// the descriptor ask passed in (the command itself may make no
		// UNIX socket, and none is reachable by a path).
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fail(fmt.Errorf("the proxy's bridge cannot listen on the sandbox's loopback: %w", err))
		}
		f, err := ln.(*net.TCPListener).File()
		if err != nil {
			return fail(fmt.Errorf("the proxy's bridge: %w", err))
		}
		lnFD = int(f.Fd())
		url := "http://" + ln.Addr().String()
		kept := env[:0]
		for _, kv := range env {
			if name, _, _ := strings.Cut(kv, "="); !isProxyVar(name) {
				kept = append(kept, kv)
			}
		}
		env = kept
		for _, v := range proxyVars {
			env = append(env, v+"="+url)
		}
	}
	if cs.ScratchFD > 0 {
		unix.Close(cs.ScratchFD) // mounted by isolate
	}
	next := cs
	next.ScratchFD, next.ProxyFD = 0, 0
	spec, err := json.Marshal(next)
	if err != nil {
		return fail(err)
	}
	// This thread drops every capability, and so does the image it
	// executes: the init keeps none, and the second stage starts with
	// none (it needs none: no_new_privs lets it load Landlock and seccomp).
	if err := dropCapabilities(); err != nil {
		return fail(fmt.Errorf("the sandbox's init cannot drop its capabilities: %w", err))
	}
	for _, fd := range []int{int(report.Fd()), lnFD, cs.ProxyFD} {
		if fd > 0 {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
				return fail(fmt.Errorf("the sandbox's init: %w", err))
			}
		}
	}
	args := append([]string{os.Args[0], reaperArg, strconv.Itoa(int(report.Fd())), strconv.Itoa(lnFD), strconv.Itoa(cs.ProxyFD), string(spec), path}, argv...)
	err = syscall.Exec("/proc/self/exe", args, env)
	return fail(fmt.Errorf("the sandbox's init cannot become the reaper: %w", err))
}

// reaperArg is the init's last image: REPORT-FD LISTENER-FD BRIDGE-FD
// POLICY-JSON PATH ARGV... (-1 and 0 for no listener and no bridge).
const reaperArg = "__ask_sandbox_reaper"

// reaperMain starts the command through the second stage and waits for
// it, reaping every orphan, passing on signals, and relaying the proxy's
// bridge; it exits as the command did.
func reaperMain(args []string) int {
	if len(args) < 5 {
		return childFailed
	}
	reportFD, _ := strconv.Atoi(args[0])
	lnFD, _ := strconv.Atoi(args[1])
	ctl, _ := strconv.Atoi(args[2])
	syscall.CloseOnExec(reportFD)
	report := os.NewFile(uintptr(reportFD), "sandbox report")
	var cs childSpec
	if err := json.Unmarshal([]byte(args[3]), &cs); err != nil {
		fmt.Fprintf(report, "the policy given to the sandbox's init is not valid: %v", err)
		return childFailed
	}
	// The command may not look into this process, whatever the seccomp
	// layer says of ptrace.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, syscall.SIGCONT, syscall.SIGALRM)
	if lnFD > 0 && ctl > 0 {
		syscall.CloseOnExec(lnFD)
		syscall.CloseOnExec(ctl)
		ln, err := net.FileListener(os.NewFile(uintptr(lnFD), "proxy listener"))
		if err != nil {
			fmt.Fprintf(report, "the proxy's bridge: %v", err)
			return childFailed
		}
		go bridgeIn(ln, ctl)
	}
	// The report pipe goes on to the second stage as descriptor 3, which
	// closes it by executing the command.
	pid, err := syscall.ForkExec("/proc/self/exe", append([]string{os.Args[0], execArg, args[3], "3"}, args[4:]...),
		&syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2, report.Fd()}})
	if err != nil {
		fmt.Fprintf(report, "the sandbox's init cannot start the command: %v", err)
		return childFailed
	}
	report.Close()
	go func() {
		for s := range signals {
			syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return childFailed // no child left: cannot happen before the command's end
		}
		if got != pid {
			continue // an orphan, reaped
		}
		code := -1
		switch {
		case ws.Exited():
			code = ws.ExitStatus()
		case ws.Signaled():
			// PID 1 cannot die of a signal it sends itself: say it as a
			// shell does.
			code = 128 + int(ws.Signal())
		}
		if code < 0 {
			continue
		}
		if len(cs.GitDirs) > 0 {
			// What the command left running ends first: nothing may plant
			// a name after the sweep.
			endAll()
			sweepGitDirs(cs.GitDirs, func(msg string) { fmt.Fprintln(os.Stderr, msg) })
		}
		return code
	}
}

// endAll kills every other process of the PID namespace, whose init this
// is, and reaps them.
func endAll() {
	syscall.Kill(-1, syscall.SIGKILL)
	for {
		_, err := syscall.Wait4(-1, nil, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return // ECHILD: none left
		}
	}
}

// bridgeIn relays each connection to ln over ctl, a socket to ask's proxy:
// a new socket pair per connection, one end sent over ctl.
func bridgeIn(ln net.Listener, ctl int) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return
			}
			err = unix.Sendmsg(ctl, []byte{0}, unix.UnixRights(pair[1]), nil, 0)
			unix.Close(pair[1])
			f := os.NewFile(uintptr(pair[0]), "proxy bridge")
			defer f.Close()
			if err != nil {
				return
			}
			up, err := net.FileConn(f)
			if err != nil {
				return
			}
			defer up.Close()
			relay(conn, up)
		}()
	}
}

// relay copies both ways, passing on each side's end of writing.
func relay(a, b net.Conn) {
	done := make(chan struct{}, 2)
	copyHalf := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			c.CloseWrite()
		}
		done <- struct{}{}
	}
	go copyHalf(a, b)
	go copyHalf(b, a)
	<-done
	<-done
}

// serveBridge hands the connections a sandbox's init sends over ctl to
// the proxy, until the init has gone.
func serveBridge(ctl *os.File, p *Proxy) {
	defer ctl.Close()
	raw, err := ctl.SyscallConn()
	if err != nil {
		return
	}
	for {
		buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
		var n, oobn int
		var rerr error
		if err := raw.Read(func(fd uintptr) bool {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC|unix.MSG_DONTWAIT)
			return !errors.Is(rerr, unix.EAGAIN)
		}); err != nil {
			return
		}
		if rerr != nil || n == 0 && oobn == 0 {
			return
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			continue
		}
		for _, m := range msgs {
			fds, err := unix.ParseUnixRights(&m)
			if err != nil {
				continue
			}
			for _, fd := range fds {
				f := os.NewFile(uintptr(fd), "proxied connection")
				conn, err := net.FileConn(f)
				f.Close()
				if err == nil {
					go p.ServeConn(conn)
				}
			}
		}
	}
}

// bridgePair makes the socket pair a sandbox's proxy bridge runs over:
// ours is served by p, theirs goes to the child.
func bridgePair(p *Proxy) (theirs *os.File, err error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("the proxy's bridge: %w", err)
	}
	if err := unix.SetNonblock(pair[1], false); err != nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
		return nil, fmt.Errorf("the proxy's bridge: %w", err)
	}
	go serveBridge(os.NewFile(uintptr(pair[0]), "proxy bridge"), p)
	return os.NewFile(uintptr(pair[1]), "proxy bridge"), nil
}
