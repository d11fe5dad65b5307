package main

import (
	"context"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/tools"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// extraTools loads the tools that do not come with ask: those of
// --tools-file and those of the --mcp servers, which it starts. They come
// after the built-ins, whose names they may not take. The cleanup stops the
// servers; it is never nil, even on error. With --no-tools nothing is
// loaded or started.
//
// Exit codes: a bad --mcp value or tools file is a usage error (2); a server
// that cannot start or does not speak MCP is a failure (1); Ctrl-C during
// the start is an interruption (130).
func extraTools(c *cli.Context, stdio *IO, root *tools.Root, builtins []tools.Tool) ([]tools.Tool, func(), error) {
	if c.Bool("no-tools") {
		return nil, func() {}, nil
	}
	file := c.String("tools-file")
	if file != "" {
		file = absPath(stdio.Wd, file)
	}
	return loadExtraTools(c.Context, stdio, root, builtins, file, c.StringSlice("mcp"), c.Bool("verbose") && !c.Bool("quiet"))
}

// loadExtraTools loads the tools file (an absolute path, or "" for none)
// and starts the MCP servers of commands; replay calls it with what a
// transcript recorded. verbose passes the servers' stderr on.
func loadExtraTools(ctx context.Context, stdio *IO, root *tools.Root, builtins []tools.Tool, toolsFile string, commands []string, verbose bool) ([]tools.Tool, func(), error) {
	noop := func() {}
	var extra []tools.Tool
	if toolsFile != "" {
		list, err := tools.LoadToolsFile(toolsFile, root)
		if err != nil {
			return nil, noop, usageErr("--tools-file: %v", err)
		}
		extra = list
	}
	if len(commands) == 0 {
		return extra, noop, nil
	}
	for _, command := range commands {
		if err := mcp.CheckCommand(command); err != nil {
			return nil, noop, usageErr("--mcp %q: %v", command, err)
		}
	}
	var taken []string
	for _, t := range append(builtins[:len(builtins):len(builtins)], extra...) {
		taken = append(taken, t.Info().Name)
	}
	env := stdio.Environ()
	if len(env) == 0 {
		env = os.Environ()
	}
	opts := mcp.Options{Dir: root.Dir(), Env: tools.ChildEnv(env), Reserved: taken, Version: version}
	if verbose {
		opts.Stderr = stdio.Err
	}
	servers, err := mcp.Start(ctx, commands, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, noop, err // exit 130 through the cancellation cause
		}
		return nil, noop, withCode(exitFailure, err)
	}
	return append(extra, servers.Tools()...), servers.Close, nil
}
