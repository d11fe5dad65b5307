package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tool-list cache lets a run declare a server's tools before the
// server is up: Node servers take 0.3–1 s to start, npx several more, and
// a run would otherwise wait for the slowest before its first request.
//
// An entry is keyed by how the server is reached: for a command, the
// resolved program, its arguments, the names (never the values) of the
// variables set for it, its directory and whether it is sandboxed; for a
// URL, the URL, the transport and the names of its headers. The entry holds
// the server's reported name and version and its tools. Which version a
// command will report is known only once it answers, so an entry stands
// for "this command line, as last seen": when the server is up, its
// serverInfo and tools are compared with the entry, and the entry is
// rewritten if they differ, so the next run declares the new list. Files
// are private (0600 in a 0700 directory) and hold what the server said
// about itself, nothing of the environment or the headers.

// cacheFormat changes when the entry's meaning does, so old entries are
// not read as new ones.
const cacheFormat = "ask-mcp-tools-1"

// cacheEntry is one server's file.
type cacheEntry struct {
	Server  string      `json:"server"`
	Version string      `json:"version"`
	Tools   []*sdk.Tool `json:"tools"`
}

// toolCache is the directory of entries; a nil *toolCache keeps nothing.
type toolCache struct{ dir string }

func openCache(dir string) *toolCache {
	if dir == "" {
		return nil
	}
	return &toolCache{dir: filepath.Join(dir, "mcp-tools")}
}

func (c *toolCache) path(key string) string { return filepath.Join(c.dir, key+".json") }

// load returns the entry for key, or nil when there is none or it cannot
// be read (a broken entry is as good as none: the server is waited for).
func (c *toolCache) load(key string) *cacheEntry {
	if c == nil {
		return nil
	}
	data, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || e.Tools == nil {
		return nil
	}
	return &e
}

// store writes the entry unless the file already holds it, and reports
// whether it wrote. It replaces the file atomically, so a run reading it
// at the same time sees the old entry or the new one.
func (c *toolCache) store(key string, e cacheEntry) (bool, error) {
	if c == nil {
		return false, nil
	}
	if e.Tools == nil {
		e.Tools = []*sdk.Tool{}
	}
	data, err := json.Marshal(e)
	if err != nil {
		return false, fmt.Errorf("MCP tool cache: %w", err)
	}
	if old, err := os.ReadFile(c.path(key)); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return false, fmt.Errorf("MCP tool cache: %w", err)
	}
	f, err := os.CreateTemp(c.dir, key+".*.tmp") // 0600
	if err != nil {
		return false, fmt.Errorf("MCP tool cache: %w", err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil && cerr == nil {
		werr = os.Rename(f.Name(), c.path(key))
	}
	if werr != nil || cerr != nil {
		os.Remove(f.Name())
		return false, fmt.Errorf("MCP tool cache: %w", cmpErr(werr, cerr))
	}
	return true, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// drop removes the entry of a server that failed to start, so that the
// next run waits for it and reports why it fails before the first request.
func (c *toolCache) drop(key string) {
	if c != nil {
		os.Remove(c.path(key))
	}
}

// cacheKey names a server's entry; see the comment at the top of the file.
// p is the server's plan, dir the servers' directory.
func cacheKey(sp Server, p plan, dir string, sandboxed bool) string {
	var b strings.Builder
	field := func(name string, values ...string) {
		b.WriteString(name)
		for _, v := range values {
			b.WriteByte(0)
			b.WriteString(v)
		}
		b.WriteByte('\n')
	}
	field("format", cacheFormat, protocolVersion)
	if sp.Remote() {
		field("url", sp.URL)
		field("transport", sp.Transport)
		field("headers", sortedKeys(sp.Headers)...)
	} else {
		argv := slices.Clone(p.argv)
		if len(argv) > 0 {
			argv[0] = resolveProgram(argv[0], dir)
		}
		field("argv", argv...)
		var names []string
		for _, kv := range p.env {
			name, _, _ := strings.Cut(kv, "=")
			names = append(names, name)
		}
		slices.Sort(names)
		field("env", names...)
		field("dir", sp.Dir)
		field("sandbox", fmt.Sprint(sandboxed))
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

// resolveProgram is the program a command line names, as an absolute path
// when it can be found: another program of the same name earlier in PATH
// is another server.
func resolveProgram(name, dir string) string {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return filepath.Clean(name)
	}
	if p, err := exec.LookPath(name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	return name
}
