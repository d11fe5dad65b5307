package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Landlock rights, as granted to a hierarchy.
const (
	readRights landlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	// fileRights are the rights that mean something for a file that is not
	// a directory; Landlock refuses a rule on such a file with any other.
	fileRights landlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
		ll.AccessFSTruncate | ll.AccessFSIoctlDev | ll.AccessFSResolveUnix
	allRights landlock.AccessFSSet = (ll.AccessFSResolveUnix << 1) - 1
	// deviceRights are those of the devices every program may write to.
	deviceRights = ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// devices may be written at every level: "> /dev/null" must work. Not
// /dev/tty: a command has no terminal to talk to, and must not type into
// the person's.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full"}

// configs are go-landlock's presets from ABI 3 on; each restricts all a
// kernel of that ABI can restrict. A kernel newer than the newest gets the
// newest: it restricts no less.
var configs = []landlock.Config{
	landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7,
	landlock.V8, landlock.V9, landlock.V10, landlock.V11,
}

// restrict confines this process, and so what it executes, as p says:
// everything may be read (the credential stores excepted), only the
// scratch directory (and the working directory at Level Workdir) written.
// It never settles for less than the kernel's own ABI version offers.
func restrict(p Policy) error {
	abi, problem := landlockABI()
	if problem != "" {
		return errors.New(problem)
	}
	cfg := configs[min(abi, MinLandlockABI+len(configs)-1)-MinLandlockABI]
	// The network is cut off by the namespace, where loopback is the
	// process's own; Landlock's port rules would only break that.
	cfg.HandledAccessNet = 0
	if p.AllowNetwork {
		// Connecting to a UNIX socket by its path is networking too.
		cfg.HandledAccessFS &^= ll.AccessFSResolveUnix
	}
	g := grants{handled: cfg.HandledAccessFS, hidden: hiddenPaths(p)}
	g.add("/", readRights)
	for _, d := range devices {
		g.add(d, deviceRights)
	}
	g.add(p.Scratch, allRights)
	if !p.without(LayerNamespaces) {
		// The sandbox's own, made by isolate: POSIX semaphores and shared
		// memory (Python's multiprocessing) work, and reach no host process.
		g.add("/dev/shm", allRights)
	}
	if p.Level == Workdir {
		g.add(p.Workdir, allRights)
	}
	return cfg.Restrict(g.rules...)
}

// hiddenPaths are the real paths of the hidden files that exist. One that
// holds the working directory is not hidden: the user chose to work there.
func hiddenPaths(p Policy) []string {
	var out []string
	for _, h := range p.Hidden {
		real, err := filepath.EvalSymlinks(h)
		if err != nil {
			continue // nothing there to protect
		}
		if p.Workdir != "" && (p.Workdir == real || within(p.Workdir, real)) {
			continue
		}
		out = append(out, real)
	}
	return out
}

// grants collects the rules that grant rights to hierarchies except the
// hidden ones. Landlock only adds rights, a rule covering everything
// beneath it, so a directory above a hidden path is split: it may be
// listed, and each of its entries but the hidden one gets the rights. (A
// hidden directory's names can thus be listed; its files cannot be read.)
type grants struct {
	handled landlock.AccessFSSet
	hidden  []string
	rules   []landlock.Rule
}

func (g *grants) add(path string, rights landlock.AccessFSSet) {
	if path == "" {
		return
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return // gone, or a loop: nothing to grant
	}
	if g.hides(real) {
		return
	}
	if !g.above(real) {
		g.grant(real, rights)
		return
	}
	if real != filepath.Clean(path) {
		// A symlink to a directory above a hidden path: its real path is
		// split where it lies.
		return
	}
	g.grant(real, rights&ll.AccessFSReadDir)
	entries, err := os.ReadDir(real)
	if err != nil {
		return
	}
	for _, e := range entries {
		g.add(filepath.Join(real, e.Name()), rights)
	}
}

func (g *grants) grant(path string, rights landlock.AccessFSSet) {
	info, err := os.Stat(path)
	if err != nil {
		return
	}
	if !info.IsDir() {
		rights &= fileRights
	}
	if rights &= g.handled; rights == 0 {
		return
	}
	// A file removed since it was listed is no reason to fail.
	g.rules = append(g.rules, landlock.PathAccess(rights, path).IgnoreIfMissing())
}

// hides reports whether p is hidden or inside a hidden directory.
func (g *grants) hides(p string) bool {
	for _, h := range g.hidden {
		if p == h || within(p, h) {
			return true
		}
	}
	return false
}

// above reports whether a hidden path lies beneath directory p.
func (g *grants) above(p string) bool {
	for _, h := range g.hidden {
		if within(h, p) {
			return true
		}
	}
	return false
}

// within reports whether p lies strictly beneath dir.
func within(p, dir string) bool {
	if dir == "/" {
		return p != "/" && strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, dir+"/")
}
