package mcp

import (
	"regexp"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in      string
		env     []string
		argv    []string
		wantErr string
	}{
		{in: "mcp-server-everything stdio", argv: []string{"mcp-server-everything", "stdio"}},
		{in: "  npx  -y\t@scope/pkg  ", argv: []string{"npx", "-y", "@scope/pkg"}},
		{in: `server '/dir with spaces' "double $HOME \"q\" \\ \n"`, argv: []string{"server", "/dir with spaces", `double $HOME "q" \ \n`}},
		{in: `a\ b c\'d`, argv: []string{"a b", "c'd"}},
		{in: `x '' ""`, argv: []string{"x", "", ""}},
		{in: `x a'b'"c"d`, argv: []string{"x", "abcd"}},
		{in: "MEMORY_FILE_PATH=/tmp/m.jsonl A_B='x y' mcp-server-memory", env: []string{"MEMORY_FILE_PATH=/tmp/m.jsonl", "A_B=x y"}, argv: []string{"mcp-server-memory"}},
		{in: "server KEY=value", argv: []string{"server", "KEY=value"}}, // only leading words are variables
		{in: `"A=b" server`, argv: []string{"A=b", "server"}},           // a quoted name is a word
		{in: `1A=b server`, argv: []string{"1A=b", "server"}},
		{in: "$HOME/bin/server ~/x *.json", argv: []string{"$HOME/bin/server", "~/x", "*.json"}}, // no expansion
		{in: "", wantErr: "empty command"},
		{in: " \t\n", wantErr: "empty command"},
		{in: "A=1 B=2", wantErr: "no command after the variable assignments"},
		{in: "server 'open", wantErr: "unterminated ' quote"},
		{in: `server "open \"`, wantErr: `unterminated " quote`},
		{in: `server \`, wantErr: "a backslash ends the command"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			env, argv, err := splitCommand(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(env, "|") != strings.Join(tt.env, "|") || strings.Join(argv, "|") != strings.Join(tt.argv, "|") {
				t.Errorf("got env %q argv %q, want env %q argv %q", env, argv, tt.env, tt.argv)
			}
		})
	}
}

// quoteWord quotes w so that splitWords gives it back.
func quoteWord(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// FuzzSplitCommand: never panics, and quoting the words it returns and
// splitting again gives the same words.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{"a b", `'x y' "z \" w"`, `A=1 cmd \ x`, `'`, `"\`, "", "x\t\ny"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, _, err := splitWords(s)
		if err != nil {
			return
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, quoteWord(w))
		}
		again, _, err := splitWords(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("requoted %q: %v", quoted, err)
		}
		if strings.Join(again, "\x00") != strings.Join(words, "\x00") || len(again) != len(words) {
			t.Fatalf("split %q = %q; requoted and split again = %q", s, words, again)
		}
	})
}

func TestServerBaseName(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{"npx -y @modelcontextprotocol/server-everything", "everything"},
		{"npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /tmp", "filesystem"},
		{"./node_modules/.bin/mcp-server-filesystem /srv", "filesystem"},
		{"node node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio", "everything"},
		{"uvx mcp-server-fetch", "fetch"},
		{"uv run server.py", "server"},
		{"uv run --quiet weather.py", "weather"},
		{"python -m mcp_server_time --local-timezone=UTC", "time"},
		{"docker run -i --rm mcp/github", "github"},
		{"go run ./cmd/notes-mcp", "notes"},
		{"/usr/local/bin/github-mcp-server stdio", "github"},
		{"my.server.v2", "my_server_v2"},
		{"mcp", "mcp"},
		{"server-", "server-"},
		{"npx", "npx"},
		{"ünïcode-tool", "n_code-tool"},
		{"./" + strings.Repeat("verylong", 6), "verylongverylongverylong"},
	}
	for _, tt := range tests {
		_, argv, err := splitCommand(tt.cmd)
		if err != nil {
			t.Fatal(err)
		}
		if got := serverBaseName(argv); got != tt.want {
			t.Errorf("serverBaseName(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

func TestNamer(t *testing.T) {
	n := newNamer("builtin", "fs__read")
	if got := n.server("fs"); got != "fs" {
		t.Errorf("server = %s", got)
	}
	if got := n.server("fs"); got != "fs_2" {
		t.Errorf("second server = %s", got)
	}
	if got := n.server("builtin"); got != "builtin_2" {
		t.Errorf("reserved server name = %s", got)
	}
	long := strings.Repeat("x", maxServerNameLen)
	n.server(long)
	if got := n.server(long); len(got) > maxServerNameLen || !strings.HasSuffix(got, "_2") {
		t.Errorf("long duplicate server = %s", got)
	}

	tests := []struct{ server, remote, want string }{
		{"fs", "read_text_file", "fs__read_text_file"},
		{"fs", "read", "fs__read_2"}, // fs__read is reserved
		{"fs", "get-sum", "fs__get-sum"},
		{"fs", "a.b", "fs__a_b"},
		{"fs", "a/b", "fs__a_b_2"}, // sanitized onto a.b's name
		{"fs", "__x__", "fs__x"},
		{"fs", "!!!", "fs__tool"},
	}
	for _, tt := range tests {
		if got := n.tool(tt.server, tt.remote); got != tt.want {
			t.Errorf("tool(%s, %q) = %s, want %s", tt.server, tt.remote, got, tt.want)
		}
	}
	a := n.tool("fs", strings.Repeat("a", 80)+"1")
	b := n.tool("fs", strings.Repeat("a", 80)+"2")
	if len(a) != maxNameLen || len(b) != maxNameLen || a == b || !strings.HasPrefix(a, "fs__aaaa") {
		t.Errorf("long names %s and %s", a, b)
	}
	c := n.tool("fs", strings.Repeat("a", 80)+"1") // the same remote name again, on another server's behalf
	if c == a || len(c) > maxNameLen {
		t.Errorf("duplicate long name %s", c)
	}
}

func TestIsAssignment(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	for _, s := range []string{"", "=", "A=", "A=b", "_x=1", "1A=", "A", "A-B=", "a b=", "é=", "AB9=", "A==", "npx"} {
		if got, want := isAssignment(s), re.MatchString(s); got != want {
			t.Errorf("isAssignment(%q) = %v, want %v", s, got, want)
		}
	}
}
