package run

import (
	"context"

	"github.com/ask-cli/ask/internal/tools"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// loadExtraTools loads the tools that do not come with ask: a tools file's
// (an absolute path, or "" for none) and those of the MCP servers named by
// commands, which it starts and the run stops on Close. They come after
// the built-ins, whose names they may not take.
//
// A bad MCP command or tools file is a usage error; a server that cannot
// start or does not speak MCP is a failure; an interruption during the
// start is returned as the context's cause.
func (r *Run) loadExtraTools(ctx context.Context, root *tools.Root, builtins []tools.Tool, toolsFile string, commands []string) ([]tools.Tool, error) {
	var extra []tools.Tool
	if toolsFile != "" {
		list, err := tools.LoadToolsFile(toolsFile, root)
		if err != nil {
			return nil, Usagef("--tools-file: %v", err)
		}
		extra = list
	}
	if len(commands) == 0 {
		return extra, nil
	}
	for _, command := range commands {
		if err := mcp.CheckCommand(command); err != nil {
			return nil, Usagef("--mcp %q: %v", command, err)
		}
	}
	var taken []string
	for _, t := range append(builtins[:len(builtins):len(builtins)], extra...) {
		taken = append(taken, t.Info().Name)
	}
	opts := mcp.Options{Dir: root.Dir(), Env: root.ChildEnv(), Reserved: taken, Version: r.env.Version}
	if r.env.Verbose {
		opts.Stderr = r.env.Notes
	}
	if r.Settings.SandboxMCP.Value {
		opts.Sandbox = root.Sandbox
	}
	servers, err := mcp.Start(ctx, commands, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err // an interruption, told by the context's cause
		}
		return nil, asKind(Failure, err)
	}
	r.closers = append(r.closers, servers.Close)
	return append(extra, servers.Tools()...), nil
}
