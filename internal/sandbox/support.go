package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// MinLandlockABI is the oldest Landlock this package confines with: before
// ABI 3 (Linux 6.2) truncating a file is not something Landlock can deny,
// so a "read-only" file could still be emptied.
const MinLandlockABI = 3

// Support is what this kernel can confine, layer by layer. A Support that
// was never checked confines nothing.
type Support struct {
	// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
	LandlockABI int
	// FileSystem is why Landlock cannot confine the file system, "" when it
	// can.
	FileSystem string
	// Namespaces says how the sandbox's namespaces are made: "user" (new
	// user, mount, PID, IPC and UTS namespaces, any user) or "root" (the same
	// without a user namespace, as root); "" when they cannot be.
	Namespaces string
	// NamespacesProblem is why they cannot be made.
	NamespacesProblem string
	// Network is why no network namespace can be made, "" when one can.
	Network string
	// Seccomp is why the seccomp filter cannot be loaded, "" when it can.
	Seccomp string
	// Scratch is why the scratch directory cannot be a file system of a
	// bounded size, "" when it can. Commands still run without the bound.
	Scratch string
	// Tried says a command was run confined (CheckCommands): Trial is why
	// it could not run with the network kept (--allow-network), and
	// TrialCutOff why not with the network cut off, "" when it ran. A layer
	// the probes found can still fail to load (landlock_restrict_self
	// refused), and only running a command shows it.
	Tried              bool
	Trial, TrialCutOff string
}

// problem is why p cannot be enforced with s, "" when it can: one line
// naming the missing layer.
func (s Support) problem(p Policy) string {
	switch {
	case s.FileSystem != "" && !p.without(LayerLandlock):
		return "cannot confine the file system here: " + s.FileSystem
	case s.LandlockABI < MinLandlockABI && !p.without(LayerLandlock):
		return fmt.Sprintf("cannot confine the file system here: Landlock ABI %d, need %d", s.LandlockABI, MinLandlockABI)
	case p.AllowNetwork || p.without(LayerNamespaces):
	case s.Network != "":
		return "cannot cut off the network here: " + s.Network + " (--allow-network keeps the network and needs no network namespace)"
	}
	switch {
	case p.without(LayerNamespaces):
	case s.NamespacesProblem != "":
		return "cannot isolate commands here (the namespaces layer): " + s.NamespacesProblem
	case s.Namespaces == "":
		return "cannot isolate commands here (the namespaces layer): no way to make them was found"
	}
	if s.Seccomp != "" && !p.without(LayerSeccomp) {
		return "cannot filter system calls here (the seccomp layer): " + s.Seccomp
	}
	return ""
}

// checked is Check's answer, found once per process: the kernel does not
// change under a run.
var checked = sync.OnceValue(check)

// Check says what this kernel can confine: Landlock's ABI version, whether
// the namespaces can be made and used (trying it, with a child that exits
// at once), and whether a seccomp filter can be loaded. The answer is kept
// for the life of the process.
func Check() Support { return checked() }

// CheckCommands is Check, and then the proof: a command run confined as
// --sandbox read-only would, once with the network cut off and once with
// --allow-network. `ask sandbox check` says what this finds.
func CheckCommands() Support { return withTrials(Check(), nil) }

// withTrials runs the trials on s; broken makes those layers fail to load
// (in this package's tests alone).
func withTrials(s Support, broken []Layer) Support {
	s.Tried = true
	s.Trial = trial(s, true, broken)
	s.TrialCutOff = trial(s, false, broken)
	return s
}

// trial runs ask's own binary, which exits at once, confined as s allows
// with policy read-only, and is why it could not run, "" when it ran.
func trial(s Support, network bool, broken []Layer) string {
	dir, err := os.MkdirTemp("", "ask-sandbox-trial-")
	if err != nil {
		return fmt.Sprintf("cannot make a directory to try the sandbox in: %v", err)
	}
	defer os.RemoveAll(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	work, scratch := filepath.Join(dir, "work"), filepath.Join(dir, "scratch")
	if err := errors.Join(os.Mkdir(work, 0o700), os.Mkdir(scratch, 0o700)); err != nil {
		return fmt.Sprintf("cannot make a directory to try the sandbox in: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Sprintf("cannot find ask's own program: %v", err)
	}
	sb := &Sandbox{Policy: Policy{Level: ReadOnly, Workdir: work, Scratch: scratch, AllowNetwork: network, Break: broken}, Support: s}
	defer sb.Close()
	cmd := exec.Command(self, trialArg)
	cmd.Dir = work
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	job, err := sb.Confine(cmd)
	if err == nil {
		err = cmd.Run()
		job.Started()
		if jerr := job.Err(); jerr != nil {
			err = jerr
		}
	}
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		return refused.Reason
	case err != nil:
		return fmt.Sprintf("a confined command failed: %v %s", err, strings.TrimSpace(out.String()))
	}
	return ""
}

// LayerReport is one layer's line in `ask sandbox check`.
type LayerReport struct {
	Layer   string `json:"layer"`
	OK      bool   `json:"ok"`
	How     string `json:"how,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// Report is what `ask sandbox check` says of a kernel: whether each layer
// works here, how, or why not; Confines is whether --sandbox confines
// commands at all, Network whether it can also cut off the network (else
// only --allow-network runs commands).
type Report struct {
	Confines bool          `json:"confines"`
	Network  bool          `json:"network"`
	Layers   []LayerReport `json:"layers"`
}

// Shortfall says what --sandbox cannot do here, "" when it can do all:
// confine nothing (every sandboxed command is refused), or confine only
// with --allow-network.
func (r Report) Shortfall() string {
	switch {
	case !r.Confines:
		return "--sandbox cannot confine commands here: every sandboxed command would be refused"
	case !r.Network:
		return "--sandbox can confine commands here only with --allow-network"
	}
	return ""
}

// Describe reports what a kernel's support means for --sandbox.
func Describe(s Support) Report {
	withNet := &Sandbox{Policy: Policy{Level: ReadOnly, AllowNetwork: true}, Support: s}
	full := &Sandbox{Policy: Policy{Level: ReadOnly}, Support: s}
	r := Report{Confines: withNet.Problem() == "" && s.Trial == "", Network: full.Problem() == "" && s.TrialCutOff == ""}
	ns := LayerReport{Layer: "namespaces", OK: s.Namespaces != "" && s.NamespacesProblem == "", Problem: s.NamespacesProblem}
	switch {
	case s.Namespaces == "user":
		ns.How = "new user, mount, PID, IPC and UTS namespaces, a session of its own, capabilities dropped"
	case s.Namespaces == "root":
		ns.How = "new mount, PID, IPC and UTS namespaces (as root, without a user namespace), a session of its own, capabilities dropped"
	case ns.Problem == "":
		ns.Problem = "no way to make them was found"
	}
	network := LayerReport{Layer: "network", OK: ns.OK && s.Network == "", Problem: s.Network}
	if network.OK {
		network.How = "a new network namespace with only its own loopback"
	} else if network.Problem == "" {
		network.Problem = "it needs the namespaces layer"
	}
	ll := LayerReport{Layer: "landlock", OK: s.FileSystem == "" && s.LandlockABI >= MinLandlockABI, Problem: s.FileSystem}
	if ll.OK {
		ll.How = fmt.Sprintf("Landlock ABI %d", s.LandlockABI)
	} else if ll.Problem == "" {
		ll.Problem = fmt.Sprintf("Landlock ABI %d, need %d", s.LandlockABI, MinLandlockABI)
	}
	sc := LayerReport{Layer: "seccomp", OK: s.Seccomp == "", Problem: s.Seccomp}
	if sc.OK {
		sc.How = "an allow-list of system calls and of socket families and types (UNIX sockets only as stream or seqpacket pairs); owners, world-writable and set-id modes, TIOCSTI, ptrace attach, namespaces refused"
	}
	limits := LayerReport{Layer: "limits", OK: ns.OK && s.Scratch == "",
		How: fmt.Sprintf("%d processes and threads per command, %d MiB of scratch space per run", DefaultMaxProcesses, DefaultScratchSize>>20)}
	switch {
	case !ns.OK:
		limits.How, limits.Problem = "", "they need the namespaces layer"
	case s.Scratch != "":
		limits.How, limits.Problem = "", fmt.Sprintf("%d processes and threads per command, but the scratch space is not bounded: %s", DefaultMaxProcesses, s.Scratch)
	}
	if s.Tried {
		// A layer that failed to load when a command ran is not working,
		// whatever the probes found.
		for _, why := range []string{s.Trial, s.TrialCutOff} {
			for _, l := range []*LayerReport{&ns, &ll, &sc} {
				if why != "" && l.OK && strings.Contains(why, "the "+l.Layer+" layer") {
					l.OK, l.How, l.Problem = false, "", why
				}
			}
		}
	}
	r.Layers = []LayerReport{ns, network, ll, sc, limits}
	if s.Tried {
		tr := LayerReport{Layer: "trial", OK: s.Trial == "" && s.TrialCutOff == ""}
		switch {
		case tr.OK:
			tr.How = "a command ran confined, with the network cut off and with --allow-network"
		case s.Trial != "":
			tr.Problem = "a confined command could not run: " + s.Trial
		default:
			tr.Problem = "a confined command could not run with the network cut off: " + s.TrialCutOff
		}
		r.Layers = append(r.Layers, tr)
	}
	return r
}
