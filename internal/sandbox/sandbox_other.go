//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
)

// Main does nothing: only Linux has a sandbox child.
func Main() {}

func check() Support {
	const why = "the sandbox needs Linux (namespaces, Landlock and seccomp)"
	return Support{FileSystem: why, Network: why, NamespacesProblem: why, Seccomp: why}
}

func (s *Sandbox) scratchFS() (*os.File, error) { return nil, errors.New("the sandbox needs Linux") }

func start(*exec.Cmd, string, Policy, Support, []string, *os.File, *Proxy) (*Job, error) {
	return nil, errors.New("the sandbox needs Linux")
}

func isProxyVar(string) bool { return false }

type gitDir struct{}

func sweepGitDirs([]gitDir, func(string)) {}

func awaitExit(int) {}

// trialArg names the trial command; with no sandbox it is never run.
const trialArg = "__ask_sandbox_trial"
