package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListDirectory(t *testing.T) {
	files := map[string]string{
		"b.txt":       "b",
		"a.txt":       "a",
		"zdir/":       "",
		"cdir/x.go":   "x",
		"empty/":      "",
		".hidden":     "h",
		"big/":        "",
		"cdir/y/z.go": "z",
	}
	for i := range listMaxEntries + 7 {
		files[fmt.Sprintf("big/f%04d", i)] = ""
	}
	root := newTestRoot(t, files)
	if err := os.Symlink("a.txt", filepath.Join(root.Dir(), "link")); err != nil {
		t.Fatal(err)
	}
	tool := listDirectory{root}
	tests := []struct {
		name, args string
		want       string
		wantErr    string
	}{
		{name: "root by default", args: `{}`, want: ".hidden\na.txt\nb.txt\nbig/\ncdir/\nempty/\nlink -> a.txt\nzdir/"},
		{name: "dot", args: `{"path":"."}`, want: ".hidden\na.txt\nb.txt\nbig/\ncdir/\nempty/\nlink -> a.txt\nzdir/"},
		{name: "subdirectory", args: `{"path":"cdir"}`, want: "x.go\ny/"},
		{name: "absolute inside", args: fmt.Sprintf(`{"path":%q}`, filepath.Join(root.Dir(), "cdir")), want: "x.go\ny/"},
		{name: "empty", args: `{"path":"empty"}`, want: "(empty directory)"},
		{name: "cap", args: `{"path":"big"}`},
		{name: "file", args: `{"path":"a.txt"}`, wantErr: "not a directory; use read_file"},
		{name: "missing", args: `{"path":"nope"}`, wantErr: "does not exist"},
		{name: "outside", args: `{"path":".."}`, wantErr: "outside the working directory"},
		{name: "dev", args: `{"path":"/dev"}`, wantErr: "not accessible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runTool(t, tool, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if tt.name == "cap" {
				lines := strings.Split(got, "\n")
				if len(lines) != listMaxEntries+1 || lines[0] != "f0000" || lines[listMaxEntries-1] != "f0499" {
					t.Errorf("capped listing has %d lines, first %q", len(lines), lines[0])
				}
				if last := lines[len(lines)-1]; last != "[7 more entries not shown; list a subdirectory or use search with glob]" {
					t.Errorf("cap note = %q", last)
				}
				return
			}
			if got != tt.want {
				t.Errorf("output =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
