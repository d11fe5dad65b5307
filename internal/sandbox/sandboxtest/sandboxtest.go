// Package sandboxtest helps tests that confine commands for real.
package sandboxtest

import (
	"os"
	"testing"

	"github.com/ask-cli/ask/internal/sandbox"
)

// Require returns what the kernel supports when it can enforce p, and
// otherwise skips the test, saying why; in CI (CI set) it fails instead,
// since there the sandbox must be tested for real.
func Require(t testing.TB, p sandbox.Policy) sandbox.Support {
	t.Helper()
	s := sandbox.Check()
	sb := &sandbox.Sandbox{Policy: p, Support: s}
	if problem := sb.Problem(); problem != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must be able to confine commands: %s", problem)
		}
		t.Skipf("this kernel cannot confine commands: %s", problem)
	}
	return s
}
