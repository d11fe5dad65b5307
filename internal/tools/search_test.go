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
		{name: "empty pattern", args: `{"pattern":""}`, wantErr: "at /properties/pattern: minLength"},
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

func TestSearchIgnoreFiles(t *testing.T) {
	t.Parallel()
	root := newTestRoot(t, map[string]string{
		".git/info/exclude":  "# local only\nsecret.txt\n",
		".gitignore":         "build/\n*.log\n!keep.log\n/top-only.txt\n",
		"build/out.txt":      "needle\n",
		"app.log":            "needle\n",
		"keep.log":           "needle\n",
		"top-only.txt":       "needle\n",
		"sub/top-only.txt":   "needle\n",
		"secret.txt":         "needle\n",
		"gen.go":             "needle\n",
		"sub/.gitignore":     "gen.go\n!important.log\n",
		"sub/gen.go":         "needle\n",
		"sub/important.log":  "needle\n",
		"sub/other.log":      "needle\n",
		"sub/deep/real.go":   "needle\n",
		"node_modules/x.js":  "needle\n",
		"sub/build/copy.txt": "needle\n",
	})
	tool := search{root}
	tests := []struct {
		name, args string
		found      []string
		notFound   []string
	}{
		{name: "ignore files honoured", args: `{"pattern":"needle"}`,
			found: []string{"keep.log:1:", "sub/top-only.txt:1:", "gen.go:1:", "sub/important.log:1:", "sub/deep/real.go:1:"},
			notFound: []string{"build/out.txt", "app.log", "\ntop-only.txt", "secret.txt", "sub/gen.go", "sub/other.log",
				"node_modules", "sub/build/copy.txt"}},
		{name: "a subdirectory still sees the rules above it", args: `{"pattern":"needle","path":"sub"}`,
			found:    []string{"sub/top-only.txt:1:", "sub/important.log:1:", "sub/deep/real.go:1:"},
			notFound: []string{"sub/gen.go", "sub/other.log", "sub/build"}},
		{name: "an ignored directory given explicitly is searched", args: `{"pattern":"needle","path":"build"}`,
			found: []string{"build/out.txt:1:"}},
		{name: "an ignored file given explicitly is searched", args: `{"pattern":"needle","path":"app.log"}`,
			found: []string{"app.log:1:"}},
		{name: "include_ignored", args: `{"pattern":"needle","include_ignored":true}`,
			found: []string{"build/out.txt:1:", "app.log:1:", "secret.txt:1:", "sub/gen.go:1:", "sub/other.log:1:",
				"node_modules/x.js:1:", "sub/build/copy.txt:1:"},
			notFound: []string{".git/"}},
		{name: "no match names what was skipped", args: `{"pattern":"zebra"}`,
			found: []string{"ignored by .gitignore not searched; set include_ignored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runTool(t, tool, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tt.found {
				if !strings.Contains(got, f) {
					t.Errorf("output\n%s\ndoes not contain %q", got, f)
				}
			}
			for _, n := range tt.notFound {
				if strings.Contains("\n"+got, n) {
					t.Errorf("output\n%s\ncontains %q", got, n)
				}
			}
		})
	}
}

// TestSearchIgnoreOutsideRoot: the working directory is a subdirectory of a
// repository, whose top .gitignore and a worktree's common info/exclude
// still apply; outside any repository .gitignore means nothing, as with
// ripgrep.
func TestSearchIgnoreOutsideRoot(t *testing.T) {
	t.Parallel()
	repo := newTestRoot(t, map[string]string{
		".git/info/exclude":               "excluded.txt\n",
		".gitignore":                      "*.log\nwork/local/\n",
		"work/a.log":                      "needle\n",
		"work/excluded.txt":               "needle\n",
		"work/local/x.txt":                "needle\n",
		"work/kept.txt":                   "needle\n",
		"linked/.git":                     "gitdir: ../.git/worktrees/linked\n",
		"linked/excluded.txt":             "needle\n",
		".git/worktrees/linked/commondir": "../..\n",
	})
	work, err := NewRoot(filepath.Join(repo.Dir(), "work"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := runTool(t, search{work}, `{"pattern":"needle"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got != "kept.txt:1: needle" {
		t.Errorf("search in a repository's subdirectory =\n%s", got)
	}
	linked, err := NewRoot(filepath.Join(repo.Dir(), "linked"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := runTool(t, search{linked}, `{"pattern":"needle"}`); !strings.HasPrefix(got, "no matches") {
		t.Errorf("a linked worktree's common info/exclude was not applied:\n%s", got)
	}

	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, ".gitignore"), []byte("*.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "plain.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noRepo, err := NewRoot(outside)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := runTool(t, search{noRepo}, `{"pattern":"needle"}`); got != "plain.txt:1: needle" {
		t.Errorf("outside a repository .gitignore was applied:\n%s", got)
	}
}

// TestSearchIgnoredDoNotCrowdOut: matches in an ignored build directory no
// longer use up the match cap before the real one.
func TestSearchIgnoredDoNotCrowdOut(t *testing.T) {
	t.Parallel()
	files := map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".gitignore": "build/\n", "src/real.go": "needle here\n"}
	for i := range 30 {
		files[fmt.Sprintf("build/a%02d.txt", i)] = "needle\n"
	}
	root := newTestRoot(t, files)
	got, err := runTool(t, search{root}, `{"pattern":"needle"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got != "src/real.go:1: needle here" {
		t.Errorf("search =\n%s", got)
	}
	all, _ := runTool(t, search{root}, `{"pattern":"needle","include_ignored":true}`)
	if !strings.Contains(all, "more matches not shown") || strings.Contains(all, "src/real.go") {
		t.Errorf("include_ignored: build/ should crowd out src/ again:\n%s", all)
	}
}
