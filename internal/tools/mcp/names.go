package mcp

import (
	"fmt"
	"hash/fnv"
	"path"
	"strings"
)

// Tools are declared as SERVER__TOOL. Providers accept function names of at
// most 64 characters from [a-zA-Z0-9_-]; OpenAI is the strictest.
const (
	maxNameLen       = 64
	maxServerNameLen = 24 // leaves the tool's own name most of the room
	separator        = "__"
)

// runners are programs that start the real server named by a later
// argument: the server is named after that argument, not after npx.
var runners = map[string]bool{
	"npx": true, "pnpx": true, "bunx": true, "pnpm": true, "yarn": true, "npm": true,
	"node": true, "nodejs": true, "deno": true, "bun": true, "tsx": true, "ts-node": true,
	"uv": true, "uvx": true, "pipx": true, "python": true, "python3": true, "py": true,
	"go": true, "docker": true, "podman": true, "env": true, "exec": true, "sh": true, "bash": true,
}

// runnerVerbs are subcommands of runners (npm exec, uv run, docker run).
var runnerVerbs = map[string]bool{"run": true, "exec": true, "x": true, "dlx": true, "tool": true}

// entryFiles say nothing about the server; the directory above them does
// (node_modules/@scope/server-foo/dist/index.js is "foo").
var entryFiles = map[string]bool{"index": true, "main": true, "server": true, "cli": true, "app": true, "__main__": true, "mod": true}
var buildDirs = map[string]bool{"dist": true, "build": true, "lib": true, "src": true, "bin": true, "out": true, "cmd": true}

// serverBaseName derives a short name for a server from its argv: the
// package or program it runs, without "mcp"/"server" decorations.
// @modelcontextprotocol/server-everything → everything;
// ./node_modules/.bin/mcp-server-filesystem → filesystem.
func serverBaseName(argv []string) string {
	word := argv[0]
	if runners[path.Base(word)] {
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "-") || strings.Contains(a, "=") || runnerVerbs[a] {
				continue
			}
			word = a
			break
		}
	}
	parts := strings.Split(strings.TrimRight(word, "/"), "/")
	// An npm spec may carry a version: pkg@1.2.3, @scope/pkg@latest.
	last := parts[len(parts)-1]
	if at := strings.LastIndexByte(last, '@'); at > 0 {
		parts[len(parts)-1] = last[:at]
	}
	name := ""
	for i := len(parts) - 1; i >= 0; i-- {
		p := stripExt(parts[i])
		if p == "" || p == "." || p == ".." || buildDirs[p] || (entryFiles[p] && i > 0) {
			continue
		}
		name = p
		break
	}
	name = trimDecorations(sanitize(name))
	if len(name) > maxServerNameLen {
		name = strings.TrimRight(name[:maxServerNameLen], "_-")
	}
	if name == "" {
		return "mcp"
	}
	return name
}

func stripExt(s string) string {
	for _, ext := range []string{".js", ".mjs", ".cjs", ".ts", ".py", ".exe", ".sh", ".jar"} {
		if strings.HasSuffix(strings.ToLower(s), ext) {
			return s[:len(s)-len(ext)]
		}
	}
	return s
}

// trimDecorations drops the "mcp-server-"-style affixes most servers carry,
// when something is left.
func trimDecorations(s string) string {
	lower := strings.ToLower(s)
	for _, p := range []string{"mcp-server-", "mcp_server_", "server-mcp-", "server-", "server_", "mcp-", "mcp_"} {
		if strings.HasPrefix(lower, p) && len(s) > len(p) {
			s, lower = s[len(p):], lower[len(p):]
			break
		}
	}
	for _, x := range []string{"-mcp-server", "_mcp_server", "-server-mcp", "-mcp", "_mcp", "-server", "_server"} {
		if strings.HasSuffix(lower, x) && len(s) > len(x) {
			s = s[:len(s)-len(x)]
			break
		}
	}
	return s
}

// sanitize keeps [a-zA-Z0-9_-], turns anything else into "_", and avoids
// "__" so that the separator stays unambiguous.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	for strings.Contains(out, "__") {
		out = strings.ReplaceAll(out, "__", "_")
	}
	return strings.Trim(out, "_")
}

// namer hands out unique names, in the order asked.
type namer struct{ taken map[string]bool }

func newNamer(reserved ...string) *namer {
	n := &namer{taken: map[string]bool{}}
	for _, r := range reserved {
		n.taken[r] = true
	}
	return n
}

// server returns base, or base_2, base_3... when it is taken.
func (n *namer) server(base string) string {
	name := base
	for i := 2; n.taken[name]; i++ {
		suffix := fmt.Sprintf("_%d", i)
		name = strings.TrimRight(base[:min(len(base), maxServerNameLen-len(suffix))], "_-") + suffix
	}
	n.taken[name] = true
	return name
}

// tool returns the declared name of a server's tool: SERVER__TOOL, cut to
// 64 characters with a hash of the original name when too long, and made
// unique when sanitizing made two names equal.
func (n *namer) tool(server, remote string) string {
	tool := sanitize(remote)
	if tool == "" {
		tool = "tool"
	}
	base := server + separator + tool
	name := fit(base, remote)
	for i := 2; n.taken[name]; i++ {
		name = fit(fmt.Sprintf("%s_%d", base, i), fmt.Sprintf("%s#%d", remote, i))
	}
	n.taken[name] = true
	return name
}

// fit cuts name to maxNameLen, ending it with a short hash of key so that
// names that share a long prefix stay distinct.
func fit(name, key string) string {
	if len(name) <= maxNameLen {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	suffix := fmt.Sprintf("_%08x", h.Sum32())
	return strings.TrimRight(name[:maxNameLen-len(suffix)], "_-") + suffix
}
