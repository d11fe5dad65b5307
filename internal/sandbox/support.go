package sandbox

import (
	"fmt"
	"sync"
)

// MinLandlockABI is the oldest Landlock this package confines with: before
// ABI 3 (Linux 6.2) truncating a file is not something Landlock can deny,
// so a "read-only" file could still be emptied.
const MinLandlockABI = 3

// Support is what this kernel can confine.
type Support struct {
	// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
	LandlockABI int
	// FileSystem is why the file system cannot be confined, "" when it can.
	FileSystem string
	// Network is why the network cannot be cut off, "" when it can.
	Network string
	// Namespaces say how the network is cut off: "user+net" (any user),
	// "net" (root without user namespaces).
	Namespaces string
}

// problem is why p cannot be enforced with s, "" when it can. A Support
// that was never checked cannot enforce anything.
func (s Support) problem(p Policy) string {
	switch {
	case s.FileSystem != "":
		return "cannot confine the file system here: " + s.FileSystem
	case s.LandlockABI < MinLandlockABI:
		return fmt.Sprintf("cannot confine the file system here: Landlock ABI %d, need %d", s.LandlockABI, MinLandlockABI)
	case p.AllowNetwork:
		return ""
	case s.Network != "":
		return "cannot cut off the network here: " + s.Network + " (--allow-network keeps the network and needs no namespace)"
	case s.Namespaces == "":
		return "cannot cut off the network here: no namespace was found to work"
	}
	return ""
}

// checked is Check's answer, found once per process: the kernel does not
// change under a run.
var checked = sync.OnceValue(check)

// Check says what this kernel can confine: Landlock's ABI version, and
// whether a new network namespace can be made (trying it once, with a child
// that exits at once). The answer is kept for the life of the process.
func Check() Support { return checked() }

// Report is what `ask sandbox check` says of a kernel: whether each half
// of the sandbox works here, how, or why not.
type Report struct {
	FileSystem        bool   `json:"filesystem"`
	LandlockABI       int    `json:"landlock_abi"`
	FileSystemProblem string `json:"filesystem_problem,omitempty"`
	Network           bool   `json:"network"`
	Namespaces        string `json:"namespaces,omitempty"`
	NetworkProblem    string `json:"network_problem,omitempty"`
}

// Describe reports what a kernel's support means for --sandbox: the file
// system half is what --allow-network needs, the network half the rest.
func Describe(s Support) Report {
	fsOnly := &Sandbox{Policy: Policy{Level: ReadOnly, AllowNetwork: true}, Support: s}
	full := &Sandbox{Policy: Policy{Level: ReadOnly}, Support: s}
	r := Report{LandlockABI: s.LandlockABI, FileSystemProblem: fsOnly.Problem(), Namespaces: s.Namespaces}
	r.FileSystem = r.FileSystemProblem == ""
	r.Network = s.Network == "" && s.Namespaces != ""
	if !r.Network {
		r.NetworkProblem = s.Network
		if r.NetworkProblem == "" {
			r.NetworkProblem = full.Problem()
		}
	}
	return r
}
