package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Blocks in the shape of Claude Desktop's and Cursor's documentation (see
// testdata/mcpservers/README.md) are read as they are.
func TestMCPServersFromOtherClients(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want map[string]MCPServer
	}{
		{"claude_desktop_config.json", map[string]MCPServer{
			"filesystem": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop", "/Users/username/Downloads"}},
			"memory": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"},
				Env: map[string]string{"MEMORY_FILE_PATH": "/Users/username/memory.jsonl"}},
		}},
		{"cursor_mcp.json", map[string]MCPServer{
			"server-name":   {Command: "npx", Args: []string{"-y", "mcp-server"}, Env: map[string]string{"API_KEY": "${env:MY_SERVICE_KEY}"}},
			"python-server": {Type: "stdio", Command: "python", Args: []string{"mcp-server.py"}},
			"remote-server": {URL: "https://api.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:MY_SERVICE_TOKEN}"}},
			"legacy-sse":    {Type: "sse", URL: "http://localhost:8000/sse"},
		}},
		{"windsurf_mcp_config.json", map[string]MCPServer{
			"remote": {URL: "https://mcp.example.com/mcp", ServerURL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:EXAMPLE_TOKEN}"}},
			"local":  {Command: "npx", Args: []string{"-y", "mcp-server"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", "mcpservers", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(tt.file, data, providerNames)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f.MCPServers, tt.want) {
				t.Errorf("servers\n%+v\nwant\n%+v", f.MCPServers, tt.want)
			}
		})
	}
}

func TestMCPServersErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, data string // file in testdata/mcpservers, or data
		line, col        int
		want             string
	}{
		{"trailing comma", "bad_trailing_comma.json", "", 6, 5, "not valid JSON: invalid character '}' looking for beginning of object key string"},
		{"command and url", "bad_both.json", "", 5, 7, "mcpServers.remote-server.url: a server has a command (started here) or a url (reached over HTTP), not both"},
		{"an unknown key", "bad_unknown_key.json", "", 6, 7, `unknown key "startupTimeout" in mcpServers.server-name: known keys are alwaysAllow, args, autoApprove, command, cwd,`},
		{"VS Code's mcp.json", "vscode_mcp.json", "", 2, 3, `unknown key "inputs" at the top level: VS Code's mcp.json calls it servers: put the block under mcpServers`},
		{"VS Code's servers", "", `{"servers": {"memory": {"command": "npx"}}}`, 1, 2, `unknown key "servers" at the top level: VS Code's mcp.json calls it servers: put the block under mcpServers`},
		{"url and serverUrl", "", `{"mcpServers": {"x": {"url": "https://e.com", "serverUrl": "https://e.com"}}}`, 1, 47, "mcpServers.x.serverUrl: Windsurf's name for url: give one of them"},
		{"serverUrl and command", "", `{"mcpServers": {"x": {"command": "srv", "serverUrl": "https://e.com"}}}`, 1, 41, "mcpServers.x.serverUrl: a server has a command"},
		{"cwd with a url", "", `{"mcpServers": {"x": {"url": "https://e.com", "cwd": "/srv"}}}`, 1, 47, "mcpServers.x.cwd: belongs to a server started with command"},
		{"args as one string", "bad_args_string.json", "", 5, 7, "mcpServers.server-name.args: want a list of strings, got a string"},
		{"unknown type", "bad_type.json", "", 4, 7, `mcpServers.legacy-sse.type: "websocket": choose stdio, http, streamable-http or sse`},
		{"neither", "", `{"mcpServers": {"x": {"args": ["a"]}}}`, 1, 17, "mcpServers.x: give command (and args) to start a local server, or url for a remote one"},
		{"empty command", "", `{"mcpServers": {"x": {"command": " "}}}`, 1, 23, "mcpServers.x.command: is empty"},
		{"stdio with a url", "", `{"mcpServers": {"x": {"type": "stdio", "url": "https://e.com"}}}`, 1, 23, `mcpServers.x.type: "stdio" does not go with a url`},
		{"sse with a command", "", `{"mcpServers": {"x": {"type": "sse", "command": "srv"}}}`, 1, 23, `mcpServers.x.type: "sse" does not go with a command`},
		{"args with a url", "", `{"mcpServers": {"x": {"url": "https://e.com", "args": []}}}`, 1, 47, "mcpServers.x.args: belongs to a server started with command"},
		{"headers with a command", "", `{"mcpServers": {"x": {"command": "srv", "headers": {}}}}`, 1, 41, "mcpServers.x.headers: belongs to a url server"},
		{"not http", "", `{"mcpServers": {"x": {"url": "ws://e.com/mcp"}}}`, 1, 23, "mcpServers.x.url: give an http:// or https:// URL"},
		{"password in the url", "", `{"mcpServers": {"x": {"url": "https://me:hunter2@e.com/mcp"}}}`, 1, 23, "mcpServers.x.url: holds a password"},
		{"bad variable name", "", `{"mcpServers": {"x": {"command": "srv", "env": {"MY-KEY": "v"}}}}`, 1, 49, "mcpServers.x.env.MY-KEY: is not a variable name"},
		{"bad header name", "", `{"mcpServers": {"x": {"url": "https://e.com", "headers": {"Bad Header": "v"}}}}`, 1, 59, "mcpServers.x.headers.Bad Header: is not a header name"},
		{"null env", "", `{"mcpServers": {"x": {"command": "srv", "env": null}}}`, 1, 41, "mcpServers.x.env: null is not a setting"},
		{"no name", "", `{"mcpServers": {"": {"command": "srv"}}}`, 1, 17, "mcpServers.: a server needs a name"},
		{"in a profile", "", `{"profiles": {"p": {"mcpServers": {}}}}`, 1, 21, `unknown key "mcpServers" in profiles.p`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data, name := []byte(tt.data), "config.json"
			if tt.file != "" {
				var err error
				if data, err = os.ReadFile(filepath.Join("testdata", "mcpservers", tt.file)); err != nil {
					t.Fatal(err)
				}
				name = tt.file
			}
			_, err := Parse(name, data, providerNames)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *config.Error", err)
			}
			if ce.Line != tt.line || ce.Column != tt.col || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v (at %d:%d)\nwant %d:%d and %q", err, ce.Line, ce.Column, tt.line, tt.col, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// Blocks from Cline and Roo Code carry keys of their own: they are read,
// cwd and disabledTools are kept, and each key ask ignores draws one
// line naming it, where it is and what to do instead.
func TestMCPServersOtherClientsKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, server  string
		cwd           string
		disabledTools []string
		ignored       []string
	}{
		{"cline_mcp_settings.json", "github", "", nil, []string{
			"config file cline_mcp_settings.json:8:7: mcpServers.github.autoApprove: Cline's key, ignored by ask (approve its tools with tools.allow, such as [\"github__*\"], or --allow-tool)",
			"config file cline_mcp_settings.json:7:7: mcpServers.github.alwaysAllow: Roo Code's key, ignored by ask",
			"config file cline_mcp_settings.json:10:7: mcpServers.github.timeout: another client's key, ignored by ask",
			"config file cline_mcp_settings.json:11:7: mcpServers.github.transportType: Cline's key, ignored by ask",
		}},
		{"roo_mcp.json", "local", "/srv/mcp", []string{"tool3"}, []string{
			"mcpServers.local.alwaysAllow: Roo Code's key, ignored by ask",
			"mcpServers.local.watchPaths: Roo Code's key, ignored by ask",
		}},
		{"claude_desktop_config.json", "memory", "", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", "mcpservers", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(tt.file, data, providerNames)
			if err != nil {
				t.Fatal(err)
			}
			s := f.MCPServers[tt.server]
			if s.Cwd != tt.cwd || !reflect.DeepEqual(s.DisabledTools, tt.disabledTools) {
				t.Errorf("cwd %q, disabledTools %q; want %q, %q", s.Cwd, s.DisabledTools, tt.cwd, tt.disabledTools)
			}
			if len(s.Ignored) != len(tt.ignored) {
				t.Fatalf("ignored =\n%s\nwant %d lines", strings.Join(s.Ignored, "\n"), len(tt.ignored))
			}
			for _, want := range tt.ignored {
				found := false
				for _, got := range s.Ignored {
					found = found || strings.Contains(got, want)
				}
				if !found {
					t.Errorf("no line has %q in\n%s", want, strings.Join(s.Ignored, "\n"))
				}
			}
			for _, line := range s.Ignored {
				if strings.Contains(line, "\n") || strings.Contains(line, "GITHUB_TOKEN") {
					t.Errorf("not one line, or shows a value: %q", line)
				}
			}
		})
	}
}
