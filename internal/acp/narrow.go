package acp

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/settings"
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

// allowedModes are the modes a session of flags may take, strictest
// first: those the rows' check lets a lower layer choose.
func allowedModes(flags run.Settings) []string {
	var out []string
	for _, m := range settings.Modes {
		if _, err := settings.Narrow(flags.Values, settings.Layer{"mode": m}, "the editor's session"); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// narrow lays a session's layer over the command line's settings flags
// (wd is the directory ask was started in) through the rows' one
// lower-layer check (settings.Narrow), and returns the session's settings,
// or an error naming what would widen them. The cwd's links are resolved
// first, so that one inside the workdir pointing out is refused too.
func narrow(flags run.Settings, wd string, l layer) (run.Settings, error) {
	s := flags
	if !filepath.IsAbs(l.Cwd) {
		return s, fmt.Errorf("cwd %q: the working directory must be an absolute path", l.Cwd)
	}
	top := realPath(run.AbsPath(wd, cmp.Or(flags.Workdir.Value, ".")))
	cwd := realPath(l.Cwd)
	rel, err := filepath.Rel(top, cwd)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return s, fmt.Errorf("cwd %s is outside the working directory ask acp was started with (%s): a session may only narrow it; start ask acp with --workdir %s", l.Cwd, top, l.Cwd)
	}
	lower := settings.Layer{"workdir": rel}
	if l.Mode != "" {
		lower["mode"] = l.Mode
	}
	narrowed, err := settings.Narrow(flags.Values, lower, "the editor's session")
	if err != nil {
		return s, err
	}
	s.Values = narrowed
	s.Workdir = run.Given(cwd, "the editor's session")
	if len(l.MCP) > 0 && !flags.NoMCP.Value {
		// DESIGN §9: a session adds its MCP servers. --no-mcp starts none
		// (the run reads it); under --safe the run sandboxes every
		// server, these too.
		s.MCPServers = run.Given(append(slices.Clip(flags.MCPServers.Value), l.MCP...), "the editor's session")
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
