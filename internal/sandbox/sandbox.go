// Package sandbox confines the processes a run starts (the shell tool, user
// tools, MCP servers where asked) with the kernel's own mechanisms, in
// layers each of which holds alone:
//
//   - namespaces: new user, mount, PID, IPC, UTS and network namespaces and a
//     session of its own; a read-only view of the system with only the
//     scratch directory (and the working directory at Level Workdir)
//     writable, what git executes read-only even there, the credential
//     stores replaced by empty ones; capabilities dropped;
//   - Landlock, a second wall for the file system with the same grants;
//   - a seccomp filter that allows only the system calls, socket families
//     and socket types a build needs (no UNIX socket but a stream or
//     seqpacket pair), and narrows some of those: owners, world-writable
//     and set-id modes, TIOCSTI, ptrace attaching, new namespaces.
//
// ask itself is never confined. Confine rewrites a command, before it
// starts, to start ask's own binary with a hidden entry point (Main) in the
// new namespaces; that child sets the namespaces up and stays as their
// init, without capabilities: it starts a second stage that confines
// itself with the other layers and executes the command, which inherits
// the confinement; it passes signals on, reaps orphans, and relays the
// proxy's bridge (--allow-host: an HTTP proxy ask runs outside, the
// commands' only way out, reached on the namespace's loopback). Nothing
// needs installing.
//
// It fails closed: where the kernel cannot confine, Confine refuses with one
// line saying what is missing, and a child that cannot confine itself
// reports why and exits without running the command.
package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Level is how far a run's processes are confined (--sandbox).
type Level string

const (
	Off      Level = "off"       // not confined
	Workdir  Level = "workdir"   // write only in the working directory and the scratch directory
	ReadOnly Level = "read-only" // write only in the scratch directory
)

// ParseLevel reads a --sandbox value.
func ParseLevel(s string) (Level, error) {
	switch l := Level(s); l {
	case Off, Workdir, ReadOnly:
		return l, nil
	}
	return "", fmt.Errorf("%q: choose off, workdir or read-only", s)
}

// Policy is what a confined process may do. Every path is absolute and
// symlink-free.
type Policy struct {
	Level Level `json:"level"`
	// Workdir may be read, and written at Level Workdir.
	Workdir string `json:"workdir"`
	// Scratch is the run's private directory, always writable: TMPDIR,
	// XDG_CACHE_HOME, GOCACHE and GOTMPDIR point into it.
	Scratch      string `json:"scratch"`
	AllowNetwork bool   `json:"allow_network"`
	// Hidden are never readable: the user's credential stores.
	Hidden []string `json:"hidden"`
	// MaxProcesses caps the processes and threads of one command (0:
	// DefaultMaxProcesses).
	MaxProcesses int `json:"max_processes,omitempty"`
	// ScratchSize caps the scratch directory's size in bytes, for the
	// whole run (0: DefaultScratchSize). It is memory (a tmpfs), which the
	// kernel may swap out.
	ScratchSize int64 `json:"scratch_size,omitempty"`
	// Without leaves layers out, so that a test can show the others hold
	// alone. Only a test binary's child obeys it; ask's refuses.
	Without []Layer `json:"without,omitempty"`
	// Break makes layers fail to load, as a kernel that refuses them
	// would, so that a test can check what `ask sandbox check` says then.
	// Only a test binary's child obeys it; ask's refuses.
	Break []Layer `json:"break,omitempty"`
}

func (p Policy) broken(l Layer) bool { return slices.Contains(p.Break, l) }

// Layer is one of the sandbox's independent walls.
type Layer string

const (
	LayerNamespaces Layer = "namespaces"
	LayerLandlock   Layer = "landlock"
	LayerSeccomp    Layer = "seccomp"
)

// DefaultScratchSize is the scratch directory's size: room for a build
// cache, not for filling the machine's memory.
const DefaultScratchSize = 2 << 30

func (p Policy) scratchSize() int64 {
	if p.ScratchSize > 0 {
		return p.ScratchSize
	}
	return DefaultScratchSize
}

// DefaultMaxProcesses is the processes and threads a command may have at
// once: a parallel build's, not a fork bomb's.
const DefaultMaxProcesses = 1024

func (p Policy) without(l Layer) bool {
	for _, w := range p.Without {
		if w == l {
			return true
		}
	}
	return false
}

func (p Policy) maxProcesses() int {
	if p.MaxProcesses > 0 {
		return p.MaxProcesses
	}
	return DefaultMaxProcesses
}

// CredentialStores are the files and directories under home (and the
// XDG config directory, when it is elsewhere) that hold keys and tokens: a
// confined process can read neither them nor anything in them. askConfig
// is ask's own config file, which may hold API keys ("" for the default,
// which is covered by the config directory's ask/).
func CredentialStores(home, configHome, askConfig string) []string {
	var out []string
	if home != "" {
		for _, p := range []string{
			".ssh", ".aws", ".gnupg", ".netrc", ".docker", ".kube", ".azure",
			".git-credentials", ".password-store", ".npmrc", ".pypirc",
			".cargo/credentials", ".cargo/credentials.toml", ".local/share/keyrings",
			".pgpass", ".vault-token", ".terraform.d", ".terraformrc", ".my.cnf",
			".config/gcloud", ".config/gh", ".config/ask", ".config/git/credentials",
			".config/containers",
		} {
			out = append(out, filepath.Join(home, p))
		}
	}
	if filepath.IsAbs(configHome) {
		for _, p := range []string{"gcloud", "gh", "ask", "git/credentials", "containers"} {
			out = append(out, filepath.Join(configHome, p))
		}
	}
	if filepath.IsAbs(askConfig) {
		out = append(out, askConfig)
	}
	return out
}

// Sandbox confines the commands of one run. A nil *Sandbox, or one at
// Level Off, confines nothing.
type Sandbox struct {
	Policy Policy
	// Support is what this kernel can do (Check), told once per run.
	Support Support
	// Proxy, when set (--allow-host), is the commands' only way out of
	// their network namespace, bridged in by the child.
	Proxy *Proxy

	mu         sync.Mutex
	scratch    *os.File // the run's scratch file system, a detached mount
	scratchErr error
}

// Close releases the run's scratch file system, and with it what the
// commands left there. A nil Sandbox has nothing to release.
func (s *Sandbox) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scratch != nil {
		s.scratch.Close()
		s.scratch = nil
	}
}

// scratchLimited says whether commands get the run's bounded scratch file
// system.
func (s *Sandbox) scratchLimited() bool {
	return !s.Policy.without(LayerNamespaces) && s.Support.Namespaces != "" && s.Support.Scratch == ""
}

// Active reports whether s confines the commands it is given.
func (s *Sandbox) Active() bool { return s != nil && s.Policy.Level != Off && s.Policy.Level != "" }

// Problem is why s cannot confine its commands here, "" when it can.
func (s *Sandbox) Problem() string {
	if !s.Active() {
		return ""
	}
	return s.Support.problem(s.Policy)
}

// RefusedError is a command the sandbox would not run: the kernel cannot
// confine it as the policy asks. It is one line.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string {
	return "refused by the sandbox: " + e.Reason + "; commands never run unconfined"
}

// agentVars name the sockets of agents that hold keys: a confined command
// could not reach them, and is not told where they are.
var agentVars = []string{"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS"}

// Env variables that point into the scratch directory.
var scratchVars = []struct{ name, dir string }{
	{"TMPDIR", "tmp"},
	{"GOTMPDIR", "tmp"},
	{"XDG_CACHE_HOME", "cache"},
	{"GOCACHE", "cache/go-build"},
}

// Confine rewrites cmd, which must not have started, to run inside the
// sandbox, and returns the Job that says after the command has run whether
// the sandbox refused it. It returns a *RefusedError, and leaves cmd
// unusable, when the kernel cannot confine the command. On a nil or Off
// sandbox it does nothing and returns a nil Job, whose methods do nothing.
func (s *Sandbox) Confine(cmd *exec.Cmd) (*Job, error) {
	if !s.Active() {
		return nil, nil
	}
	refuse := func(reason string) (*Job, error) {
		cmd.Path, cmd.Err = "", &RefusedError{Reason: reason}
		return nil, cmd.Err
	}
	if p := s.Problem(); p != "" {
		return refuse(p)
	}
	if cmd.Process != nil {
		return nil, errors.New("sandbox: the command has already started")
	}
	if cmd.Err != nil {
		return nil, cmd.Err // not found: it would not start either way
	}
	self, err := os.Executable()
	if err != nil {
		return refuse(fmt.Sprintf("cannot find ask's own program to start the sandbox: %v", err))
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	if env, err = s.scratchEnv(env); err != nil {
		return refuse(err.Error())
	}
	var scratch *os.File
	if s.scratchLimited() {
		if scratch, err = s.scratchFS(); err != nil {
			return refuse(fmt.Sprintf("cannot make the scratch space: %v", err))
		}
	}
	var proxy *Proxy
	if s.Proxy != nil && !s.Policy.AllowNetwork {
		proxy = s.Proxy
		env = slices.DeleteFunc(env, func(kv string) bool {
			name, _, _ := strings.Cut(kv, "=")
			return isProxyVar(name) // the child's init names ask's
		})
	}
	return start(cmd, self, s.Policy, s.Support, env, scratch, proxy)
}

// scratchEnv points the temporary and cache directories into the scratch
// directory, so that build caches work where nothing else can be written.
func (s *Sandbox) scratchEnv(env []string) ([]string, error) {
	out := make([]string, 0, len(env)+len(scratchVars))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !isScratchVar(name) && !slices.Contains(agentVars, name) {
			out = append(out, kv)
		}
	}
	if s.Policy.Scratch == "" {
		return nil, errors.New("the run has no scratch directory")
	}
	for _, v := range scratchVars {
		dir := filepath.Join(s.Policy.Scratch, v.dir)
		// Made each time: a command may have removed it.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("scratch directory: %v", err)
		}
		out = append(out, v.name+"="+dir)
	}
	return out, nil
}

func isScratchVar(name string) bool {
	for _, v := range scratchVars {
		if v.name == name {
			return true
		}
	}
	return false
}

// Job is one confined command. Its child reports through a pipe, closed on
// exec, whether it could confine itself.
type Job struct {
	r, w *os.File
	// bridge is the child's end of the proxy's bridge, released with w.
	bridge *os.File
	// cmd is the command, and git its working directory's git directories
	// as they were before it started: once it has ended, however, what it
	// planted in them is removed (swept closes then).
	cmd   *exec.Cmd
	git   []gitDir
	swept chan struct{}
}

// Started releases the parent's end of the report pipe. Call it once the
// command has started (or failed to).
func (j *Job) Started() {
	if j == nil {
		return
	}
	if j.w != nil {
		j.w.Close()
		j.w = nil
	}
	if j.bridge != nil {
		j.bridge.Close()
		j.bridge = nil
	}
	if j.git != nil && j.swept == nil && j.cmd.Process != nil {
		j.swept = make(chan struct{})
		go func() {
			defer close(j.swept)
			// The init sweeps when the command ends as it should; this is
			// for an init killed first (a timeout kills the whole group).
			awaitExit(j.cmd.Process.Pid)
			sweepGitDirs(j.git, func(string) {})
		}()
	}
}

// Err reports, once the command has ended (or has been started and its
// program may be running), whether the sandbox refused it: a
// *RefusedError when the child could not confine itself and so did not run
// the command. It waits only until the child has either executed the
// command or exited.
func (j *Job) Err() error {
	if j == nil || j.r == nil {
		return nil
	}
	j.Started()
	msg, _ := io.ReadAll(io.LimitReader(j.r, 4<<10))
	j.r.Close()
	j.r = nil
	if j.swept != nil && j.cmd.ProcessState != nil {
		<-j.swept // the command has ended: what it planted is gone first
	}
	if len(msg) == 0 {
		return nil
	}
	return &RefusedError{Reason: strings.TrimSpace(string(msg))}
}
