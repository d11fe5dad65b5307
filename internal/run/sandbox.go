package run

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/sandbox"
)

// sandbox makes the sandbox the run's processes start in: --sandbox, or
// read-only under --safe; nil when it is off. Its scratch directory lives
// as long as the run. Where the kernel cannot confine, the sandbox is still
// made, and refuses every command, saying why: nothing runs unconfined.
func (r *Run) sandbox() (*sandbox.Sandbox, error) {
	s := r.Settings
	level, err := sandbox.ParseLevel(s.Sandbox.Value)
	if err != nil {
		level = sandbox.Off // the default, when no layer gave one
	}
	implied := s.Safe.Value && level == sandbox.Off
	if implied {
		level = sandbox.ReadOnly
	}
	if level == sandbox.Off {
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
	sb := &sandbox.Sandbox{
		Policy: sandbox.Policy{
			Level: level, Workdir: r.workdir, Scratch: scratch, AllowNetwork: s.AllowNetwork.Value,
			Hidden: hidden,
		},
		Support: check(),
	}
	r.closers = append(r.closers, sb.Close) // the scratch file system
	// Under --safe alone, the refusals say why; no warning for a run that
	// may never need a command.
	if p := sb.Problem(); p != "" && !implied && r.env.Notes != nil {
		fmt.Fprintf(r.env.Notes, "ask: warning: --sandbox %s: the sandbox %s; every command will be refused\n", level, p)
	}
	return sb, nil
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
