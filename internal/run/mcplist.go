package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/ask-cli/ask/internal/tools"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// MCPEntry is one MCP server as `ask mcp list` shows it.
type MCPEntry = mcp.Listing

// MCPTool is a listed server's tool.
type MCPTool = mcp.ListedTool

// MCPFailures is the error, and its exit code, when servers failed to
// list their tools (each entry says why): 4 when one refused its
// credentials, else 1.
func MCPFailures(entries []MCPEntry) error {
	failed, auth := 0, false
	for _, e := range entries {
		if e.Error == "" {
			continue
		}
		failed++
		auth = auth || e.AuthFailed
	}
	if failed == 0 {
		return nil
	}
	kind := fault.Failure
	if auth {
		kind = fault.Auth
	}
	return fault.New(kind, fmt.Errorf("mcp list: %d of the servers failed to list their tools", failed))
}

// ListMCP lists the MCP servers settings name: the --mcp flags' and the
// config file's (disabled ones included, and marked). With withTools, the
// enabled ones are started, each listed with its tools or why it failed.
func ListMCP(ctx context.Context, s Settings, cfg *Config, env Env, withTools bool) ([]MCPEntry, error) {
	flagSpecs, err := mcpServers(s.MCP.Value, s.MCPHeaders.Value, s.SandboxMCP.Value)
	if err != nil {
		return nil, err
	}
	var specs []mcp.Server
	var entries []MCPEntry
	for _, sp := range flagSpecs {
		specs = append(specs, sp)
		e := describe(sp)
		e.Source = "flag --mcp"
		entries = append(entries, e)
	}
	var disabled []MCPEntry
	if cfg != nil && cfg.File != nil {
		enabled := map[string]mcp.Server{}
		for _, sp := range cfg.mcpServers() {
			enabled[sp.Name] = sp
		}
		src := "config " + cfg.File.Name()
		for _, name := range cfg.File.MCPServerNames() {
			sp, ok := enabled[name]
			if !ok {
				// Shown under its own name, as written: it is not started.
				fs := cfg.File.MCPServers[name]
				e := describe(mcp.Server{Name: name, Argv: argvOf(fs.Command, fs.Args), Env: fs.Env, URL: fs.URL, Headers: fs.Headers, Transport: fs.Type, Sandbox: fs.Sandbox})
				e.Source, e.Disabled = src, true
				disabled = append(disabled, e)
				continue
			}
			sp.Sandbox = sp.Sandbox || s.SandboxMCP.Value
			specs = append(specs, sp)
			if env.Notes != nil {
				for _, n := range sp.Notes {
					fmt.Fprintf(env.Notes, "ask: warning: %s\n", n)
				}
			}
			e := describe(sp)
			e.Source = src
			entries = append(entries, e)
		}
	}
	names := mcp.Names(specs, builtinNames()...)
	store := signInStore(env)
	for i := range entries {
		entries[i].Name = names[i]
		entries[i].SignIn = signInState(store, specs[i])
	}
	if withTools && len(specs) > 0 {
		if err := listTools(ctx, s, env, specs, entries); err != nil {
			return nil, err
		}
	}
	return append(entries, disabled...), nil
}

// listTools starts the servers, every one optional so that one failing
// does not hide the others, and fills in their tools or their error.
func listTools(ctx context.Context, s Settings, env Env, specs []mcp.Server, entries []MCPEntry) error {
	wd := AbsPath(env.Wd, s.Workdir.Value)
	if _, err := os.Stat(wd); err != nil {
		return fault.Usagef("--workdir: %v", err)
	}
	// The servers start as a run would start them: in the run's sandbox
	// where asked, and every one there under --safe; a remote one under
	// --safe only when --allow-host names it.
	r := &Run{Settings: s, env: env, workdir: wd}
	if r.env.Getenv == nil {
		r.env.Getenv = func(string) string { return "" }
	}
	defer r.Close()
	sb, err := r.sandbox()
	if err != nil {
		return err
	}
	var started []mcp.Server
	var index []int // of each started server's entry
	for i, sp := range specs {
		if why := s.remoteRefused(sp); sp.Remote() && why != "" {
			entries[i].Error = why
			continue
		}
		sp.Optional = true
		sp.Sandbox = sp.Sandbox || s.Safe.Value
		started = append(started, sp)
		index = append(index, i)
	}
	if len(started) == 0 {
		return nil
	}
	child := &tools.Root{}
	vars, _ := r.credentials("")
	child.Scrub(vars...)
	if s.Safe.Value {
		child.KeepOnly(s.SandboxEnv.Value...)
	}
	servers, err := mcp.Start(ctx, started, mcp.Options{
		Dir: wd, Env: child.ChildEnv(), Reserved: builtinNames(), Version: env.Version,
		Getenv: env.Getenv, NoNetwork: s.Safe.Value && !s.AllowNetwork.Value && len(s.AllowHosts.Value) == 0, Sandbox: sb,
		Starting: env.MCPStarting, Auth: signInStore(env),
	})
	if err != nil {
		return err // only an interruption: every server is optional
	}
	defer servers.Close()
	for j, l := range servers.Listing() {
		i := index[j]
		if l.Err != nil {
			var auth *mcp.AuthError
			entries[i].Error, entries[i].AuthFailed = l.Err.Error(), errors.As(l.Err, &auth)
			if entries[i].AuthFailed && auth.Login != nil {
				entries[i].SignIn = "login needed"
			}
			continue
		}
		entries[i].Tools = []MCPTool{}
		for _, t := range l.Tools {
			info := t.Info()
			remote := strings.TrimPrefix(info.Name, l.Name+"__")
			if r, ok := t.(interface{ RemoteName() string }); ok {
				remote = r.RemoteName()
			}
			entries[i].Tools = append(entries[i].Tools, MCPTool{Name: remote, Declared: info.Name, Description: info.Description, ReadOnly: info.Risk == tools.Read})
		}
	}
	return nil
}

// builtinNames are the names of ask's own tools, which no server's may
// take.
func builtinNames() []string {
	root, err := tools.NewRoot(os.TempDir())
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range tools.Builtins(root) {
		out = append(out, t.Info().Name)
	}
	return out
}

func argvOf(command string, args []string) []string {
	if command == "" {
		return nil
	}
	return append([]string{command}, args...)
}

func describe(sp mcp.Server) MCPEntry {
	e := MCPEntry{Name: sp.Name, URL: sp.URL, Sandbox: sp.Sandbox, Transport: "stdio",
		Env: slices.Sorted(maps.Keys(sp.Env)), Headers: slices.Sorted(maps.Keys(sp.Headers))}
	switch {
	case sp.Remote():
		e.Transport = map[string]string{"": "http+sse", "http": "http", "streamable-http": "http", "sse": "sse"}[sp.Transport]
		e.Sandbox = false
	case len(sp.Argv) > 0:
		e.Command = sp.Argv
	default:
		e.Command = []string{sp.Command}
	}
	return e
}
