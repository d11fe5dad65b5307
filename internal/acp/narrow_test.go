package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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

// TestSessionWidensNoRow is generated from the rows: an editor's session
// is a lower layer, and for every row marked widening it either carries
// the row (its cwd is the workdir row, its mode the mode row) and is
// refused the row's wide sample, or has no way to name the row and leaves
// the command line's value, whatever mode and MCP servers it asks for.
func TestSessionWidensNoRow(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	// What a session carries, by row; a field added to layer must be
	// taught here.
	carried := map[string]func(wide string) layer{
		"workdir": func(wide string) layer {
			if !filepath.IsAbs(wide) {
				wide = filepath.Join(top, wide)
			}
			return layer{Cwd: wide}
		},
		"mode": func(wide string) layer { return layer{Cwd: top, Mode: wide} },
	}
	if n := reflect.TypeFor[layer]().NumField(); n != 3 {
		t.Fatalf("a session's layer has %d fields, this test knows 3 (Cwd, Mode, MCP): teach it the new one", n)
	}
	server := mcp.Server{Name: "s", URL: "http://127.0.0.1:1/mcp"}
	rows := 0
	for _, r := range settings.Rows() {
		if !r.Widening() || !r.IsSetting() {
			continue
		}
		rows++
		s := r.Samples()
		flags := run.Settings{Values: settings.Defaults()}
		flags.Workdir = run.Given(top, "--workdir")
		if s.Over != "" && r.Name != "workdir" {
			if err := flags.Values.Give(r.Name, s.Over, "--"+r.Name); err != nil {
				t.Fatalf("%s: the Over sample %q: %v", r.Name, s.Over, err)
			}
		}
		if session, ok := carried[r.Name]; ok {
			if _, err := narrow(flags, "/", session(s.Wide)); err == nil {
				t.Errorf("%s: a session giving %q was not refused", r.Name, s.Wide)
			}
			continue
		}
		upper, _, _ := flags.Values.Get(r.Name)
		for _, mode := range append(allowedModes(flags), "") {
			got, err := narrow(flags, "/", layer{Cwd: top, Mode: mode, MCP: []mcp.Server{server}})
			if err != nil {
				t.Fatalf("%s: a session in mode %q: %v", r.Name, mode, err)
			}
			if v, _, _ := got.Values.Get(r.Name); !reflect.DeepEqual(v, upper) {
				t.Errorf("%s: a session in mode %q made it %#v, the command line gave %#v", r.Name, mode, v, upper)
			}
		}
	}
	if rows < 20 {
		t.Errorf("only %d rows are marked widening: the rows lost their marks", rows)
	}
}
