package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/sandbox/sandboxtest"
)

// A server started in the read-only sandbox cannot write outside its
// scratch directory, and its tools say they are sandboxed.
func TestMCPInTheSandbox(t *testing.T) {
	workdir, scratch := t.TempDir(), t.TempDir()
	p := sandbox.Policy{Level: sandbox.ReadOnly, Workdir: workdir, Scratch: scratch}
	sb := &sandbox.Sandbox{Policy: p, Support: sandboxtest.Require(t, p)}
	target := filepath.Join(workdir, "written.txt")
	s := startTest(t, context.Background(), Options{Dir: workdir, Sandbox: sb},
		serverCommand("tools", "ASK_MCP_TEST_WRITE="+target))
	env := toolByName(t, s, "test__env")
	if !env.Info().Sandboxed {
		t.Error("a sandboxed server's tool is not marked sandboxed")
	}
	out, err := call(t, env, `{}`)
	// The read-only view answers first; Landlock, behind it, would deny.
	if err != nil || !strings.Contains(out, "write: open "+target+": read-only file system") {
		t.Errorf("the server could write in a read-only sandbox: %q, %v", out, err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the file was written")
	}
}

// Where the kernel cannot confine, a sandboxed server is not started.
func TestMCPRefusedByTheSandbox(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started")
	sb := &sandbox.Sandbox{
		Policy:  sandbox.Policy{Level: sandbox.Workdir, Workdir: t.TempDir(), Scratch: t.TempDir()},
		Support: sandbox.Support{FileSystem: "Landlock is disabled in this kernel"},
	}
	_, err := Start(context.Background(), commandServers(true, "sh -c 'touch "+marker+"'"), Options{Sandbox: sb})
	const want = `MCP server "sh -c 'touch ` + "%s" + `'": refused by the sandbox: cannot confine the file system here: Landlock is disabled in this kernel; commands never run unconfined`
	if err == nil || err.Error() != strings.Replace(want, "%s", marker, 1) {
		t.Errorf("err = %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the refused server ran")
	}
}
