package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSearch(t *testing.T) {
	many := numberedFile(100) // "line 1" ... "line 100"
	root := newTestRoot(t, map[string]string{
		"main.go":                 "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
		"lib/util.go":             "package lib\n// hello from lib\nvar X = 1\n",
		"lib/notes.txt":           "hello\nhello\n",
		"docs/readme.md":          "Say Hello.\n",
		"many.txt":                many,
		".git/config":             "hello in git\n",
		"node_modules/x/index.js": "hello in deps\n",
		"sub/.git/x":              "hello in nested git\n",
		"bin.dat":                 "hello\x00binary",
		"crlf.txt":                "a\r\nhello\r\nb\r\n",
		"long.txt":                strings.Repeat("y", 400) + "hello" + "\n",
		"big.txt":                 strings.Repeat("hello\n", searchMaxFileSize/6+1),
	})
	if err := os.Symlink("main.go", filepath.Join(root.Dir(), "link.go")); err != nil {
		t.Fatal(err)
	}
	tool := search{root}
	tests := []struct {
		name, args string
		want       string
		contains   []string
		absent     []string
		wantErr    string
	}{
		{name: "literal with context", args: `{"pattern":"println","path":"main.go"}`,
			want: "main.go:3- func main() {\nmain.go:4: \tprintln(\"hello\")\nmain.go:5- }"},
		{name: "first line has no line before", args: `{"pattern":"package","path":"lib/util.go"}`,
			want: "lib/util.go:1: package lib\nlib/util.go:2- // hello from lib"},
		{name: "adjacent matches share context", args: `{"pattern":"hello","path":"lib/notes.txt"}`,
			want: "lib/notes.txt:1: hello\nlib/notes.txt:2: hello"},
		{name: "groups separated", args: `{"pattern":"line 5","path":"many.txt"}`,
			want: "many.txt:4- line 4\nmany.txt:5: line 5\nmany.txt:6- line 6\n--\n" +
				"many.txt:49- line 49\nmany.txt:50: line 50\nmany.txt:51: line 51\nmany.txt:52: line 52\nmany.txt:53: line 53\nmany.txt:54: line 54\n" +
				"many.txt:55: line 55\nmany.txt:56: line 56\nmany.txt:57: line 57\nmany.txt:58: line 58\nmany.txt:59: line 59\nmany.txt:60- line 60"},
		{name: "tree skips vcs, deps, binary, large and symlinks", args: `{"pattern":"hello"}`,
			contains: []string{"main.go:4: \tprintln", "lib/util.go:2: // hello", "lib/notes.txt:1: hello", "crlf.txt:2: hello", "--\n", "[1 file over 2 MB skipped]"},
			absent:   []string{".git", "node_modules", "bin.dat", "link.go", "big.txt", "\r"}},
		{name: "case sensitive literal", args: `{"pattern":"Hello"}`, want: "docs/readme.md:1: Say Hello.\n[1 file over 2 MB skipped]"},
		{name: "regex", args: `{"pattern":"^func \\w+\\(","regex":true}`,
			want: "main.go:2- \nmain.go:3: func main() {\nmain.go:4- \tprintln(\"hello\")\n[1 file over 2 MB skipped]"},
		{name: "regex metacharacters are literal by default", args: `{"pattern":"main()"}`,
			contains: []string{"main.go:3: func main() {"}},
		{name: "case insensitive regex", args: `{"pattern":"(?i)say hello","regex":true,"path":"docs"}`, want: "docs/readme.md:1: Say Hello."},
		{name: "glob on names", args: `{"pattern":"hello","glob":"*.go"}`,
			contains: []string{"main.go:4:", "lib/util.go:2:"}, absent: []string{"notes.txt", "readme"}},
		{name: "glob with a directory", args: `{"pattern":"hello","glob":"lib/*.txt"}`,
			want: "lib/notes.txt:1: hello\nlib/notes.txt:2: hello"},
		{name: "path restricts", args: `{"pattern":"hello","path":"docs"}`, want: "no matches for \"hello\" in docs"},
		{name: "limit", args: `{"pattern":"line","path":"many.txt"}`,
			want: manyLines(1, 20) + "many.txt:21- line 21\n[80 more matches not shown; narrow the search with path or glob]"},
		{name: "long lines are cut", args: `{"pattern":"hello","path":"long.txt"}`,
			want: "long.txt:1: " + strings.Repeat("y", 300) + "… [line truncated: 300 of 405 bytes shown]"},
		{name: "no match", args: `{"pattern":"zebra"}`, contains: []string{"no matches for \"zebra\" in .", "(1 file over 2 MB skipped)"}},
		{name: "invalid regex", args: `{"pattern":"(","regex":true}`, wantErr: "invalid regex: error parsing regexp"},
		{name: "invalid glob", args: `{"pattern":"x","glob":"["}`, wantErr: "invalid glob"},
		{name: "empty pattern", args: `{"pattern":""}`, wantErr: "pattern is required"},
		{name: "outside", args: `{"pattern":"x","path":"../"}`, wantErr: "outside the working directory"},
		{name: "missing path", args: `{"pattern":"x","path":"nope"}`, wantErr: "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runTool(t, tool, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q (output %q)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("output =\n%s\nwant\n%s", got, tt.want)
			}
			for _, c := range tt.contains {
				if !strings.Contains(got, c) {
					t.Errorf("output\n%s\ndoes not contain %q", got, c)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(got, a) {
					t.Errorf("output\n%s\ncontains %q", got, a)
				}
			}
		})
	}
}

// manyLines renders lines from..to of many.txt as consecutive matches.
func manyLines(from, to int) string {
	var sb strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&sb, "many.txt:%d: line %d\n", i, i)
	}
	return sb.String()
}

func TestSearchCancelled(t *testing.T) {
	root := newTestRoot(t, map[string]string{"a.txt": "x\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := search{root}.Run(ctx, json.RawMessage(`{"pattern":"x"}`))
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("search with a cancelled context: %v", err)
	}
}

// searchTree makes dirs×files source-like files of 200 lines each, with a
// match every 50 lines.
func searchTree(b *testing.B, dirs, files int) *Root {
	root := newTestRoot(b, nil)
	var sb strings.Builder
	for i := range 200 {
		if i%50 == 0 {
			fmt.Fprintf(&sb, "func target%d() {}\n", i)
		} else {
			fmt.Fprintf(&sb, "\tvalue := compute(%d) // some ordinary code\n", i)
		}
	}
	for d := range dirs {
		dir := filepath.Join(root.Dir(), fmt.Sprintf("pkg%d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range files {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), []byte(sb.String()), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return root
}

func BenchmarkSearchTree(b *testing.B) {
	root := searchTree(b, 20, 50) // 1000 files, 200 000 lines
	for _, bc := range []struct{ name, args string }{
		{"literal", `{"pattern":"target150"}`},
		{"regex", `{"pattern":"target1[0-9]+\\(","regex":true}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tool := search{root}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tool.Run(context.Background(), json.RawMessage(bc.args)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
