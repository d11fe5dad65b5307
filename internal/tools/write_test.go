package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEditFile(t *testing.T) {
	const code = "package main\n\nfunc a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	tests := []struct {
		name, file, args string
		wantFile         string // the file afterwards ("" = unchanged)
		want, wantErr    string
	}{
		{name: "single line", file: code,
			args:     `{"path":"f.go","old_text":"func a() {","new_text":"func alpha() {"}`,
			wantFile: strings.Replace(code, "func a()", "func alpha()", 1),
			want:     "edited f.go: replaced 1 line at line 3 with 1 line"},
		{name: "first occurrence only, others reported", file: code,
			args:     `{"path":"f.go","old_text":"\treturn 1\n","new_text":"\treturn 2\n\t// two\n"}`,
			wantFile: strings.Replace(code, "\treturn 1\n", "\treturn 2\n\t// two\n", 1),
			want:     "edited f.go: replaced 1 line at line 4 with 2 lines; 1 later occurrence left unchanged (include more surrounding text to pick another)"},
		{name: "multi-line", file: code,
			args:     `{"path":"f.go","old_text":"func b() {\n\treturn 1\n}","new_text":"func b() int { return 1 }"}`,
			wantFile: strings.Replace(code, "func b() {\n\treturn 1\n}", "func b() int { return 1 }", 1),
			want:     "edited f.go: replaced 3 lines at line 7 with 1 line"},
		{name: "delete", file: code,
			args:     `{"path":"f.go","old_text":"package main\n\n","new_text":""}`,
			wantFile: strings.TrimPrefix(code, "package main\n\n"),
			want:     "edited f.go: replaced 2 lines at line 1 with 0 lines"},
		{name: "crlf file edited as shown by read_file", file: "a\r\nb\r\nc\r\n",
			args:     `{"path":"f.go","old_text":"a\nb","new_text":"x\ny"}`,
			wantFile: "x\r\ny\r\nc\r\n",
			want:     "edited f.go: replaced 2 lines at line 1 with 2 lines"},
		{name: "miss", file: code,
			args:    `{"path":"f.go","old_text":"func c() {","new_text":"x"}`,
			wantErr: `old_text was not found in "f.go"; it must match the file exactly, including spaces, indentation and line breaks. Call read_file (or search) first and copy the exact text`},
		{name: "whitespace miss", file: code,
			args:    `{"path":"f.go","old_text":"    return 1","new_text":"x"}`,
			wantErr: "Call read_file (or search) first"},
		{name: "same text", file: code,
			args: `{"path":"f.go","old_text":"a","new_text":"a"}`, wantErr: "nothing to change"},
		{name: "empty old_text", file: code,
			args: `{"path":"f.go","old_text":"","new_text":"a"}`, wantErr: "at /properties/old_text: minLength"},
		{name: "missing new_text", file: code,
			args: `{"path":"f.go","old_text":"a"}`, wantErr: `required: missing properties: ["new_text"]`},
		{name: "missing file", file: code,
			args: `{"path":"nope.go","old_text":"a","new_text":"b"}`, wantErr: "does not exist"},
		{name: "outside", file: code,
			args: `{"path":"../f.go","old_text":"a","new_text":"b"}`, wantErr: "outside the working directory"},
		{name: "directory", file: code,
			args: `{"path":".","old_text":"a","new_text":"b"}`, wantErr: "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newTestRoot(t, map[string]string{"f.go": tt.file})
			path := filepath.Join(root.Dir(), "f.go")
			if err := os.Chmod(path, 0o751); err != nil {
				t.Fatal(err)
			}
			got, err := runTool(t, editFile{root}, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("error: %v", err)
			} else if got != tt.want {
				t.Errorf("result = %q, want %q", got, tt.want)
			}
			wantFile := tt.wantFile
			if wantFile == "" {
				wantFile = tt.file
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != wantFile {
				t.Errorf("file =\n%q\nwant\n%q", data, wantFile)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != 0o751 {
				t.Errorf("mode = %v, want 0751 kept", info.Mode().Perm())
			}
			assertNoTempFiles(t, root.Dir())
		})
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestEditFileThroughSymlinkInside(t *testing.T) {
	root := newTestRoot(t, map[string]string{"real.txt": "hello\n"})
	if err := os.Symlink("real.txt", filepath.Join(root.Dir(), "alias.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := runTool(t, editFile{root}, `{"path":"alias.txt","old_text":"hello","new_text":"bye"}`); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(root.Dir(), "real.txt")); string(data) != "bye\n" {
		t.Errorf("real.txt = %q, want the edit", data)
	}
	if info, err := os.Lstat(filepath.Join(root.Dir(), "alias.txt")); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("alias.txt is no longer a symlink: %v, %v", info, err)
	}
}

func TestWriteFile(t *testing.T) {
	root, base := confinedTree(t)
	dir := root.Dir()
	if err := os.Chmod(filepath.Join(dir, "in.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args    string
		file          string // where the content must land (relative to the root)
		content       string
		want, wantErr string
	}{
		{name: "create", args: `{"path":"new.txt","content":"hi\n"}`, file: "new.txt", content: "hi\n", want: "created new.txt: wrote 3 bytes"},
		{name: "create with directories", args: `{"path":"a/b/c/new.txt","content":"x"}`, file: "a/b/c/new.txt", content: "x", want: "created a/b/c/new.txt: wrote 1 byte"},
		{name: "overwrite", args: `{"path":"in.txt","content":"replaced"}`, file: "in.txt", content: "replaced", want: "overwrote in.txt: wrote 8 bytes"},
		{name: "empty content", args: `{"path":"empty.txt","content":""}`, file: "empty.txt", content: "", want: "created empty.txt: wrote 0 bytes"},
		{name: "through a symlink inside", args: `{"path":"link_in/g.txt","content":"g"}`, file: "sub/g.txt", content: "g", want: "created link_in/g.txt: wrote 1 byte"},
		{name: "absolute inside", args: fmt.Sprintf(`{"path":%q,"content":"abs"}`, filepath.Join(dir, "abs.txt")), file: "abs.txt", content: "abs"},
		{name: "missing content", args: `{"path":"x.txt"}`, wantErr: `required: missing properties: ["content"]`},
		{name: "missing path", args: `{"content":"x"}`, wantErr: `required: missing properties: ["path"]`},
		{name: "empty path", args: `{"path":"","content":"x"}`, wantErr: "at /properties/path: minLength"},
		{name: "directory", args: `{"path":"sub","content":"x"}`, wantErr: "is a directory"},
		{name: "parent is a file", args: `{"path":"in.txt/x","content":"x"}`, wantErr: "not a directory"},
		{name: "dotdot", args: `{"path":"../outside/new.txt","content":"x"}`, wantErr: "outside the working directory"},
		{name: "symlink out", args: `{"path":"link_out/new.txt","content":"x"}`, wantErr: "outside the working directory"},
		{name: "symlink chain out", args: `{"path":"chain1/new.txt","content":"x"}`, wantErr: "outside the working directory"},
		{name: "overwrite through a symlink out", args: `{"path":"link_out_abs","content":"x"}`, wantErr: "outside the working directory"},
		{name: "dangling symlink", args: `{"path":"dangling_out","content":"x"}`, wantErr: "symbolic link to a missing target"},
		{name: "dev", args: `{"path":"/dev/null","content":"x"}`, wantErr: "not accessible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runTool(t, writeFile{root}, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("result = %q, want %q", got, tt.want)
			}
			data, err := os.ReadFile(filepath.Join(dir, tt.file))
			if err != nil || string(data) != tt.content {
				t.Errorf("%s = %q, %v; want %q", tt.file, data, err, tt.content)
			}
		})
	}
	// Nothing reached the outside, and the secret is intact.
	entries, _ := os.ReadDir(filepath.Join(base, "outside"))
	if len(entries) != 1 {
		t.Errorf("outside holds %d entries, want only secret.txt", len(entries))
	}
	if data, _ := os.ReadFile(filepath.Join(base, "outside", "secret.txt")); string(data) != "secret\n" {
		t.Errorf("secret.txt = %q, changed", data)
	}
	if _, err := os.Stat(filepath.Join(base, "nowhere")); err == nil {
		t.Error("a write through the dangling symlink created its target")
	}
	if info, _ := os.Stat(filepath.Join(dir, "in.txt")); info.Mode().Perm() != 0o600 {
		t.Errorf("overwritten in.txt mode = %v, want 0600 kept", info.Mode().Perm())
	}
	assertNoTempFiles(t, dir)
}

// Replaces reads what a write would overwrite, resolved as the write
// resolves its path, so that the approval question can show the change;
// nothing for a new file, a FIFO (read without hanging), a directory, a
// path outside the working directory, or a file too large to show.
func TestWriteReplaces(t *testing.T) {
	t.Parallel()
	root := newTestRoot(t, map[string]string{"notes.txt": "one\ntwo\n", "dir/": "", "big.txt": strings.Repeat("x", replacesMax+1)})
	if err := mkfifo(filepath.Join(root.dir, "fifo")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, want string
		ok         bool
	}{
		{"notes.txt", "one\ntwo\n", true},
		{"./dir/../notes.txt", "one\ntwo\n", true},
		{"new.txt", "", false},
		{"fifo", "", false},
		{"dir", "", false},
		{"../outside.txt", "", false},
		{"big.txt", "", false},
	}
	for _, tt := range tests {
		args, _ := json.Marshal(map[string]string{"path": tt.path, "content": "x"})
		got, ok := writeFile{root}.Replaces(string(args))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}
