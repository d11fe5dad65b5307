package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

func TestNarrow(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	sub := filepath.Join(top, "sub")
	outside := t.TempDir()
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// A link inside the workdir that leads out of it.
	if err := os.Symlink(outside, filepath.Join(top, "door")); err != nil {
		t.Fatal(err)
	}
	flags := func(mode string, noMCP bool) run.Settings {
		s := run.Settings{Values: settings.Defaults()}
		s.Workdir = run.Given(top, "--workdir")
		s.Mode = run.Given(mode, "--mode")
		s.NoMCP = run.Given(noMCP, "--no-mcp")
		return s
	}
	server := mcp.Server{Name: "s", URL: "http://127.0.0.1:1/mcp"}
	for _, tc := range []struct {
		name    string
		flags   run.Settings
		l       layer
		wantErr string
		check   func(t *testing.T, s run.Settings)
	}{
		{name: "the workdir itself", flags: flags("agent", false), l: layer{Cwd: top},
			check: func(t *testing.T, s run.Settings) {
				if s.Workdir.Value != realPath(top) || s.Mode.Value != "agent" {
					t.Errorf("workdir %q mode %q", s.Workdir.Value, s.Mode.Value)
				}
			}},
		{name: "a directory inside", flags: flags("agent", false), l: layer{Cwd: sub},
			check: func(t *testing.T, s run.Settings) {
				if s.Workdir.Value != realPath(sub) {
					t.Errorf("workdir %q, want %q", s.Workdir.Value, sub)
				}
			}},
		{name: "outside", flags: flags("agent", false), l: layer{Cwd: outside}, wantErr: "outside the working directory"},
		{name: "the parent", flags: flags("agent", false), l: layer{Cwd: filepath.Dir(top)}, wantErr: "outside"},
		{name: "dot-dot out", flags: flags("agent", false), l: layer{Cwd: sub + "/../.."}, wantErr: "outside"},
		{name: "a link that leads out", flags: flags("agent", false), l: layer{Cwd: filepath.Join(top, "door")}, wantErr: "outside"},
		{name: "relative", flags: flags("agent", false), l: layer{Cwd: "sub"}, wantErr: "absolute"},
		{name: "a stricter mode", flags: flags("agent", false), l: layer{Cwd: top, Mode: "plan"},
			check: func(t *testing.T, s run.Settings) {
				if s.Mode.Value != "plan" {
					t.Errorf("mode %q, want plan", s.Mode.Value)
				}
			}},
		{name: "ask under plan", flags: flags("plan", false), l: layer{Cwd: top, Mode: "ask"}},
		{name: "agent under plan", flags: flags("plan", false), l: layer{Cwd: top, Mode: "agent"}, wantErr: `"mode" would widen`},
		{name: "plan under ask", flags: flags("ask", false), l: layer{Cwd: top, Mode: "plan"}, wantErr: "would widen"},
		{name: "no such mode", flags: flags("agent", false), l: layer{Cwd: top, Mode: "yolo"}, wantErr: `"yolo": choose ask, plan or agent`},
		{name: "MCP servers added", flags: flags("agent", false), l: layer{Cwd: top, MCP: []mcp.Server{server}},
			check: func(t *testing.T, s run.Settings) {
				if len(s.MCPServers.Value) != 1 || s.MCPServers.Value[0].URL != server.URL {
					t.Errorf("MCP servers %+v", s.MCPServers.Value)
				}
			}},
		{name: "--no-mcp wins", flags: flags("agent", true), l: layer{Cwd: top, MCP: []mcp.Server{server}},
			check: func(t *testing.T, s run.Settings) {
				if len(s.MCPServers.Value) != 0 || !s.NoMCP.Value {
					t.Errorf("MCP servers %+v under --no-mcp", s.MCPServers.Value)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := narrow(tc.flags, "/", tc.l)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.check != nil:
				tc.check(t, s)
			}
			if err == nil && (s.Safe.Value != tc.flags.Safe.Value || s.Yes.Value != tc.flags.Yes.Value) {
				t.Error("a session changed --safe or --yes")
			}
		})
	}
}

func TestMCPServersFromSession(t *testing.T) {
	t.Parallel()
	raw := func(s string) []json.RawMessage { return []json.RawMessage{json.RawMessage(s)} }
	for _, tc := range []struct {
		in      string
		wantErr string
	}{
		{`{"name":"a","command":"srv","args":["-x"],"env":[{"name":"K","value":"v"}]}`, ""},
		{`{"type":"http","name":"h","url":"http://127.0.0.1:9/mcp","headers":[{"name":"A","value":"b"}]}`, ""},
		{`{"type":"sse","name":"s","url":"http://127.0.0.1:9/sse","headers":[]}`, ""},
		{`{"type":"ws","name":"w","url":"ws://x"}`, "unknown transport"},
		{`{"name":"a","args":[],"env":[]}`, "needs a command"},
		{`{"type":"http","name":"h","headers":[]}`, "needs a url"},
		// ask's own variables (its keys) are not the session's to read.
		{`{"name":"a","command":"srv","args":[],"env":[{"name":"K","value":"${OPENAI_API_KEY}"}]}`, "may not read"},
		{`{"type":"http","name":"h","url":"http://127.0.0.1:9/mcp","headers":[{"name":"Authorization","value":"Bearer ${ANTHROPIC_API_KEY}"}]}`, "may not read"},
	} {
		_, err := mcpServers(raw(tc.in))
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: err %v, want %q", tc.in, err, tc.wantErr)
		}
	}
}
