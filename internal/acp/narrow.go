package acp

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// An editor's session is a lower layer (DESIGN §1): the command line's
// flags are the most it may allow. What a client sends (its cwd, a mode,
// MCP servers) is laid over them here, in one place, and a value that
// would widen them is refused, naming it.

// layer is what a client's session asks for.
type layer struct {
	Cwd  string
	Mode string // "" keeps the command line's
	MCP  []mcp.Server
}

// modeRank orders the modes from the strictest: ask and plan are read-only
// (ask also bounded to a few steps); agent may use every tool.
func modeRank(mode string) int {
	switch mode {
	case policy.ModeAsk:
		return 0
	case policy.ModePlan:
		return 1
	}
	return 2
}

// allowedModes are the modes a session of flags may take, strictest first.
func allowedModes(flags run.Settings) []string {
	var out []string
	for _, m := range []string{policy.ModeAsk, policy.ModePlan, policy.ModeAgent} {
		if modeRank(m) <= modeRank(flags.Mode.Value) {
			out = append(out, m)
		}
	}
	return out
}

// narrow lays a session's layer over the command line's settings flags
// (wd is the directory ask was started in) and returns the session's
// settings, or an error naming what would widen them.
func narrow(flags run.Settings, wd string, l layer) (run.Settings, error) {
	s := flags
	if !filepath.IsAbs(l.Cwd) {
		return s, fmt.Errorf("cwd %q: the working directory must be an absolute path", l.Cwd)
	}
	top := realPath(run.AbsPath(wd, cmp.Or(flags.Workdir.Value, ".")))
	cwd := realPath(l.Cwd)
	if !within(top, cwd) {
		return s, fmt.Errorf("cwd %s is outside the working directory ask acp was started with (%s): a session may only narrow it; start ask acp with --workdir %s", l.Cwd, top, l.Cwd)
	}
	s.Workdir = run.Given(cwd, "session cwd")
	if l.Mode != "" {
		if !policy.ValidMode(l.Mode) {
			return s, fmt.Errorf("mode %q: ask's modes are %s", l.Mode, strings.Join(allowedModes(flags), ", "))
		}
		if !slices.Contains(allowedModes(flags), l.Mode) {
			return s, fmt.Errorf("mode %s would widen --mode %s (%s): a session may only choose %s", l.Mode, flags.Mode.Value, flags.Mode.Source, strings.Join(allowedModes(flags), ", "))
		}
		s.Mode = run.Given(l.Mode, "session mode")
	}
	if len(l.MCP) > 0 && !flags.NoMCP.Value {
		// --no-mcp starts none (the run reads it); under --safe the run
		// sandboxes every server, these too.
		s.MCPServers = run.Given(append(slices.Clip(flags.MCPServers.Value), l.MCP...), "session mcpServers")
	}
	return s, nil
}

// realPath is p absolute and cleaned, its symbolic links resolved where
// it exists.
func realPath(p string) string {
	p = filepath.Clean(p)
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return p
}

// within reports whether dir is top or inside it.
func within(top, dir string) bool {
	rel, err := filepath.Rel(top, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
