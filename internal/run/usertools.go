package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/mcpauth"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/tools"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// loadExtraTools loads the tools that do not come with ask: a tools file's
// (an absolute path, or "" for none), those of the MCP servers named by
// commands (--mcp: command lines or URLs) and those of the config file's
// mcpServers; it starts the servers, and the run stops them on Close.
// They come after the built-ins, whose names they may not take.
//
// A bad MCP command or tools file is a usage error; a server that refuses
// its credentials is an Auth error; one that cannot start or does not
// speak MCP is a failure (a config file's is left out with a warning); an
// interruption during the start is returned as the context's cause.
func (r *Run) loadExtraTools(ctx context.Context, root *tools.Root, builtins []tools.Tool, toolsFile string, commands []string) ([]tools.Tool, error) {
	var extra []tools.Tool
	if toolsFile != "" {
		list, err := tools.LoadToolsFile(toolsFile, root)
		if err != nil {
			return nil, fault.Usagef("--tools-file: %v", err)
		}
		extra = list
	}
	s := r.Settings
	if s.NoMCP.Value {
		return extra, nil // --no-mcp: neither --mcp's servers nor the config file's
	}
	specs, err := mcpServers(commands, s.MCPHeaders.Value, s.SandboxMCP.Value)
	if err != nil {
		return nil, err
	}
	for _, sp := range s.MCPServers.Value {
		sp.Sandbox = sp.Sandbox || s.SandboxMCP.Value
		specs = append(specs, sp)
	}
	// Under --safe, a remote server left is one --allow-host names: its
	// read-only tools may reach it (NoNetwork below).
	specs = r.confineServers(specs, root)
	if len(specs) == 0 {
		return extra, nil
	}
	for _, sp := range specs {
		for _, n := range sp.Notes {
			r.note("warning: %s", n)
		}
	}
	var taken []string
	for _, t := range append(builtins[:len(builtins):len(builtins)], extra...) {
		taken = append(taken, t.Info().Name)
	}
	opts := mcp.Options{Dir: root.Dir(), Env: root.ChildEnv(), Reserved: taken, Version: r.env.Version,
		Getenv: r.env.Getenv, Warn: r.env.Notes, NoNetwork: s.Safe.Value && !s.AllowNetwork.Value && len(s.AllowHosts.Value) == 0, Sandbox: root.Sandbox,
		CacheDir: MCPCacheDir(r.env.Getenv), Starting: r.env.MCPStarting,
		Auth: r.signIns(), Ask: r.env.Ask}
	if r.env.Verbose {
		opts.Stderr = r.env.Notes
	}
	servers, err := mcp.Start(ctx, specs, opts)
	if err != nil {
		var auth *mcp.AuthError
		switch {
		case ctx.Err() != nil:
			return nil, err // an interruption, told by the context's cause
		case errors.As(err, &auth):
			return nil, asKind(Auth, err)
		}
		return nil, asKind(Failure, err)
	}
	r.closers = append(r.closers, servers.Close)
	return append(extra, servers.Tools()...), nil
}

// signIns is the store of MCP sign-ins the run's servers use; a token
// renewed in the run is hidden from the tools' output from then on.
func (r *Run) signIns() mcpauth.Store {
	store := mcpauth.OpenStore(history.StateDir(r.env.Getenv))
	store.Kept = r.toolSecrets.Add
	return store
}

// confineServers holds the servers to what the run may do. Under --safe,
// and in a replay whose invocation has a sandbox, every server's program
// starts in the sandbox, or is refused there: a config's command line may
// run the checkout's own code (python3 -m NAME finds NAME.py in it), and a
// transcript's may be anything. Under --safe a remote server is not
// contacted, nor sent its tokens, unless --allow-network or --allow-host
// names its host.
func (r *Run) confineServers(specs []mcp.Server, root *tools.Root) []mcp.Server {
	s := r.Settings
	all := root.Sandbox.Active() && (s.Safe.Value || r.env.Replay != nil)
	out := specs[:0:0]
	for _, sp := range specs {
		if !sp.Remote() {
			sp.Sandbox = sp.Sandbox || all
			out = append(out, sp)
			continue
		}
		if why := s.remoteRefused(sp); why != "" {
			r.note("%s", why)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// remoteRefused says why a remote server is not contacted: under --safe,
// only one on a host --allow-host names (or with --allow-network) is; ""
// when it may be.
func (s Settings) remoteRefused(sp mcp.Server) string {
	if !s.Safe.Value || s.AllowNetwork.Value {
		return ""
	}
	host := ""
	if u, err := url.Parse(sp.URL); err == nil {
		host = u.Hostname()
	}
	port := 443
	if strings.HasPrefix(sp.URL, "http:") {
		port = 80
	}
	if p := (sandbox.Proxy{Hosts: s.AllowHosts.Value}); host != "" && p.Allowed(host, port) {
		return ""
	}
	return fmt.Sprintf("%s: not contacted under --safe: nothing leaves the machine but the model's requests (--allow-host %s would allow it)",
		cmp.Or(sp.Origin, "MCP server "+providers.RedactURL(sp.URL)), cmp.Or(host, "HOST"))
}

// mcpServers turns --mcp values into servers: a URL is reached with the
// --mcp-header headers, anything else is a command line.
func mcpServers(values, headerFlags []string, sandboxed bool) ([]mcp.Server, error) {
	headers, err := ParseMCPHeaders(headerFlags)
	if err != nil {
		return nil, err
	}
	var out []mcp.Server
	urls := 0
	for _, v := range values {
		if mcp.IsURL(v) {
			urls++
			out = append(out, mcp.Server{URL: strings.TrimSpace(v), Headers: headers})
			continue
		}
		if err := mcp.CheckCommand(v); err != nil {
			return nil, fault.Usagef("--mcp %q: %v", v, err)
		}
		out = append(out, mcp.Server{Command: v, Sandbox: sandboxed})
	}
	if len(headers) > 0 && urls == 0 {
		return nil, fault.Usagef("--mcp-header: no --mcp URL to send it to (the config file's servers take theirs from their own headers)")
	}
	for _, sp := range out {
		if sp.Remote() {
			if err := mcp.CheckServer(sp); err != nil {
				// Not the URL as given: it may hold a password.
				return nil, fault.Usagef("--mcp %q: %v", providers.RedactURL(sp.URL), err)
			}
		}
	}
	return out, nil
}

// ParseMCPHeaders reads --mcp-header values, "Name: value". A credential
// must come from the environment: an Authorization value that names no
// variable (${NAME}) is refused, and the value is never repeated.
func ParseMCPHeaders(values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, v := range values {
		name, value, ok := strings.Cut(v, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fault.Usagef("--mcp-header: give NAME: VALUE, such as 'Authorization: Bearer ${MY_TOKEN}'")
		}
		if strings.EqualFold(name, "Authorization") && !strings.Contains(value, "${") {
			return nil, fault.Usagef("--mcp-header %s: a credential must not be typed on the command line, where it is recorded and shown: put it in an environment variable and write 'Authorization: Bearer ${NAME}' (in single quotes, so the shell leaves it alone)", name)
		}
		out[name] = value
	}
	return out, nil
}

// MCPCacheDir is where the MCP servers' tool lists are kept between runs:
// $XDG_CACHE_HOME/ask, else ~/.cache/ask; "" (no cache) when neither
// says where. A relative XDG_CACHE_HOME is ignored, as the XDG spec says.
func MCPCacheDir(getenv func(string) string) string {
	if dir := getenv("XDG_CACHE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "ask")
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".cache", "ask")
	}
	return ""
}
