package run

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"sync"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/sandbox"
)

// sandbox makes the sandbox the run's processes start in: --sandbox, or
// read-only under --safe; nil when it is off. Its scratch directory lives
// as long as the run. Where the kernel cannot confine, the sandbox is still
// made, and refuses every command, saying why: nothing runs unconfined.
func (r *Run) sandbox() (*sandbox.Sandbox, error) {
	s := r.Settings
	level := s.SandboxLevel()
	// --safe is read-only whatever --sandbox says (a workdir sandbox
	// would let unapproved commands write the checkout).
	implied := s.Safe.Value && level != sandbox.ReadOnly
	if s.Safe.Value {
		if level == sandbox.Workdir {
			r.note("--safe runs commands in the read-only sandbox: --sandbox workdir (%s) is not used", s.Sandbox.Source)
		}
		level = sandbox.ReadOnly
	}
	if level == sandbox.Off {
		if len(s.AllowHosts.Value) > 0 {
			r.note("warning: --allow-host (%s) narrows only sandboxed commands' network: with --sandbox off, commands reach every host", s.AllowHosts.Source)
		}
		return nil, nil
	}
	check := r.env.SandboxCheck
	if check == nil {
		check = sandbox.Check
	}
	scratch, err := os.MkdirTemp("", "ask-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: scratch directory: %w", err)
	}
	r.closers = append(r.closers, func() { removeScratch(scratch) })
	// Real paths: Landlock's rules hold on to what a path leads to.
	if real, err := filepath.EvalSymlinks(scratch); err == nil {
		scratch = real
	}
	hidden := sandbox.CredentialStores(r.home(), r.env.Getenv("XDG_CONFIG_HOME"), r.env.Getenv("ASK_CONFIG"))
	// ask's state holds every kept run: past prompts, answers and what
	// tools read, from every project. A confined command reads none of it,
	// as the file tools do not.
	if state := history.StateDir(r.env.Getenv); state != "" {
		hidden = append(hidden, state)
	}
	if cache := MCPCacheDir(r.env.Getenv); cache != "" {
		hidden = append(hidden, cache)
	}
	for _, h := range s.SandboxHide.Value {
		abs := AbsPath(r.workdir, h)
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		hidden = append(hidden, abs)
	}
	sb := &sandbox.Sandbox{
		Policy: sandbox.Policy{
			Level: level, Workdir: r.workdir, Scratch: scratch, AllowNetwork: s.AllowNetwork.Value,
			Hidden: hidden, MaxProcesses: s.SandboxMaxProcesses.Value, ScratchSize: s.ScratchBytes(),
		},
		Support: check(),
	}
	if hosts := s.AllowHosts.Value; len(hosts) > 0 && !s.AllowNetwork.Value {
		sb.Proxy = &sandbox.Proxy{Hosts: hosts, OnConnect: r.network.tell,
			Resolve: r.env.ProxyResolve, Dial: r.env.ProxyDial}
		r.closers = append(r.closers, sb.Proxy.Close)
	}
	r.closers = append(r.closers, sb.Close) // the scratch file system
	// Under --safe alone, the refusals say why; no warning for a run that
	// may never need a command.
	if p := sb.Problem(); p != "" && !implied && r.env.Notes != nil {
		fmt.Fprintf(r.env.Notes, "ask: warning: --sandbox %s: the sandbox %s; every command will be refused\n", level, p)
	}
	return sb, nil
}

// networkHook passes the proxy's connections on to the run's transcript
// once it is being written (Execute).
type networkHook struct {
	mu sync.Mutex
	fn func(host string, port int, allowed bool)
}

func (h *networkHook) set(fn func(host string, port int, allowed bool)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fn = fn
}

func (h *networkHook) tell(host string, port int, allowed bool) {
	h.mu.Lock()
	fn := h.fn
	h.mu.Unlock()
	if fn != nil {
		fn(host, port, allowed)
	}
}

// home is the user's home directory, where the credential stores are.
func (r *Run) home() string {
	if h := r.env.Getenv("HOME"); h != "" {
		return h
	}
	if u, err := user.Current(); err == nil {
		return u.HomeDir
	}
	return ""
}

// removeScratch removes the scratch directory, even where a command made
// a directory in it read-only (Go's module cache does).
func removeScratch(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(path, 0o700)
		}
		return nil
	})
	os.RemoveAll(dir)
}
