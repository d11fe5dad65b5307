package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// newTestRoot makes a root in a temporary directory holding files (name →
// content; a name ending in "/" is a directory).
func newTestRoot(t testing.TB, files map[string]string) *Root {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// numberedFile returns n lines "line N".
func numberedFile(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}

// numberedOutput is read_file's rendering of lines from..to of numberedFile.
func numberedOutput(from, to int) string {
	var sb strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&sb, "%d: line %d\n", i, i)
	}
	return sb.String()
}

// runTool calls tool as a run does, through a registry: its arguments are
// checked against its schema before it runs.
func runTool(t testing.TB, tool Tool, args string) (string, error) {
	t.Helper()
	reg, err := NewRegistry(tool)
	if err != nil {
		t.Fatal(err)
	}
	out, failed := reg.Call(context.Background(), tool.Info().Name, args)
	if failed {
		return "", errors.New(out)
	}
	return out, nil
}

func TestReadFile(t *testing.T) {
	long := strings.Repeat("x", 5000)
	runes := strings.Repeat("é", 1500) // after "a", the 2000-byte cut falls inside a rune
	root := newTestRoot(t, map[string]string{
		"a.txt":      "alpha\nbeta\ngamma\n",
		"noeol.txt":  "one\ntwo",
		"crlf.txt":   "one\r\ntwo\r\n",
		"empty.txt":  "",
		"blank.txt":  "\n",
		"long.txt":   "short\n" + long + "\nend\n",
		"runes.txt":  "a" + runes + "\n",
		"bin.dat":    "text\x00more",
		"lateNUL":    strings.Repeat("a", binarySniffLen) + "\x00",
		"3000.txt":   numberedFile(3000),
		"10.txt":     numberedFile(10),
		"sub/":       "",
		"wide.txt":   strings.Repeat(strings.Repeat("w", 1000)+"\n", 200),
		"sub/in.txt": "in\n",
	})
	tool := readFile{root}
	tests := []struct {
		name, args string
		want       string // exact output, or
		contains   []string
		wantErr    string
	}{
		{name: "whole file", args: `{"path":"a.txt"}`, want: "1: alpha\n2: beta\n3: gamma"},
		{name: "no final newline", args: `{"path":"noeol.txt"}`, want: "1: one\n2: two"},
		{name: "crlf", args: `{"path":"crlf.txt"}`, want: "1: one\n2: two"},
		{name: "empty", args: `{"path":"empty.txt"}`, want: "(empty file)"},
		{name: "one blank line", args: `{"path":"blank.txt"}`, want: "1: "},
		{name: "subdirectory", args: `{"path":"sub/in.txt"}`, want: "1: in"},
		{name: "absolute inside", args: fmt.Sprintf(`{"path":%q}`, filepath.Join(root.Dir(), "a.txt")), want: "1: alpha\n2: beta\n3: gamma"},
		{name: "offset", args: `{"path":"a.txt","offset":2}`, want: "2: beta\n3: gamma"},
		{name: "offset and limit", args: `{"path":"10.txt","offset":3,"limit":2}`,
			want: numberedOutput(3, 4) + "[lines 3-4 of 10 shown; call read_file with offset 5 to continue]"},
		{name: "limit reaching the end has no note", args: `{"path":"10.txt","offset":9,"limit":2}`, want: strings.TrimSuffix(numberedOutput(9, 10), "\n")},
		{name: "line cap", args: `{"path":"3000.txt"}`,
			want: numberedOutput(1, 2000) + "[truncated: lines 1-2000 of 3000 shown; call read_file with offset 2001 to continue]"},
		{name: "limit above the cap is capped", args: `{"path":"3000.txt","limit":2500}`,
			want: numberedOutput(1, 2000) + "[truncated: lines 1-2000 of 3000 shown; call read_file with offset 2001 to continue]"},
		{name: "continue after the cap", args: `{"path":"3000.txt","offset":2001}`, want: strings.TrimSuffix(numberedOutput(2001, 3000), "\n")},
		{name: "byte cap", args: `{"path":"wide.txt"}`,
			contains: []string{"1: www", "\n[truncated: lines 1-50 of 200 shown; call read_file with offset 51 to continue]"}},
		{name: "long line", args: `{"path":"long.txt"}`,
			want: "1: short\n2: " + long[:2000] + "… [line truncated: 2000 of 5000 bytes shown]\n3: end"},
		{name: "long line of runes is cut on a rune boundary", args: `{"path":"runes.txt"}`,
			want: "1: a" + strings.Repeat("é", 999) + "… [line truncated: 1999 of 3001 bytes shown]"},
		{name: "offset past the end", args: `{"path":"10.txt","offset":11}`, wantErr: "offset 11 is past the end of the file (10 lines)"},
		{name: "offset zero", args: `{"path":"10.txt","offset":0}`, wantErr: "at /properties/offset: minimum: 0/1 is less than 1"},
		{name: "limit zero", args: `{"path":"10.txt","limit":0}`, wantErr: "at /properties/limit: minimum: 0/1 is less than 1"},
		{name: "fractional offset", args: `{"path":"10.txt","offset":1.5}`, wantErr: `at /properties/offset: type: 1.5 has type "number", want "integer"`},
		{name: "binary", args: `{"path":"bin.dat"}`, wantErr: `"bin.dat" is a binary file`},
		{name: "NUL after the sniffed prefix is text", args: `{"path":"lateNUL","limit":1}`, contains: []string{"1: aaa"}},
		{name: "directory", args: `{"path":"sub"}`, wantErr: "is a directory; use list_directory"},
		{name: "missing", args: `{"path":"nope.txt"}`, wantErr: `"nope.txt" does not exist`},
		{name: "no path", args: `{}`, wantErr: `required: missing properties: ["path"]`},
		{name: "empty path", args: `{"path":""}`, wantErr: "at /properties/path: minLength"},
		{name: "outside", args: `{"path":"../x"}`, wantErr: "outside the working directory"},
		{name: "proc", args: `{"path":"/proc/self/environ"}`, wantErr: "/proc, /dev and /sys are not accessible"},
		{name: "bad JSON", args: `{"path":`, wantErr: "invalid arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runTool(t, tool, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q (output %.200q)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("output =\n%.600q\nwant\n%.600q", got, tt.want)
			}
			for _, c := range tt.contains {
				if !strings.Contains(got, c) {
					t.Errorf("output %.300q... does not contain %q", got, c)
				}
			}
			if len(got) > readMaxBytes+200 {
				t.Errorf("output is %d bytes, over the cap", len(got))
			}
		})
	}
}

func TestReadFileFIFO(t *testing.T) {
	root := newTestRoot(t, nil)
	if err := mkfifo(filepath.Join(root.Dir(), "pipe")); err != nil {
		t.Skip("mkfifo:", err)
	}
	_, err := runTool(t, readFile{root}, `{"path":"pipe"}`)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("read_file on a FIFO: %v, want a refusal (and no hang)", err)
	}
}

// writeNumbered writes lines "line N <padding>" until the file has at least
// size bytes and returns how many lines it wrote.
func writeNumbered(t testing.TB, path string, size int) int {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	pad := strings.Repeat("p", 50)
	n, written := 0, 0
	for written < size {
		n++
		k, _ := fmt.Fprintf(w, "line %d %s\n", n, pad)
		written += k
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReadFileLarge reads a 20 MB file: the page is bounded, the total line
// count exact, and the file is streamed, not loaded (little memory).
func TestReadFileLarge(t *testing.T) {
	root := newTestRoot(t, nil)
	lines := writeNumbered(t, filepath.Join(root.Dir(), "big.log"), 20<<20)
	tool := readFile{root}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := runTool(t, tool, `{"path":"big.log"}`)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading a 20 MB file allocated %d bytes; it must be streamed", alloc)
	}
	if len(got) > readMaxBytes+200 {
		t.Errorf("output is %d bytes, over the 50 KB cap", len(got))
	}
	body, note, ok := strings.Cut(got, "\n[truncated: ")
	if !ok {
		t.Fatalf("no truncation note at the end of %.200q", got[len(got)-200:])
	}
	shown := strings.Count(body, "\n") + 1
	wantNote := fmt.Sprintf("lines 1-%d of %d shown; call read_file with offset %d to continue]", shown, lines, shown+1)
	if note != wantNote {
		t.Errorf("note = %q, want %q", note, wantNote)
	}
	if !strings.HasPrefix(body, "1: line 1 p") || !strings.HasSuffix(body, fmt.Sprintf("%d: line %d %s", shown, shown, strings.Repeat("p", 50))) {
		t.Errorf("page is not lines 1-%d: %.80q ... %.80q", shown, body, body[len(body)-80:])
	}

	// The last lines, from an offset deep in the file.
	got, err = runTool(t, tool, fmt.Sprintf(`{"path":"big.log","offset":%d}`, lines-1))
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("p", 50)
	want := fmt.Sprintf("%d: line %d %s\n%d: line %d %s", lines-1, lines-1, pad, lines, lines, pad)
	if got != want {
		t.Errorf("tail page = %q, want %q", got, want)
	}
}

func BenchmarkReadFile50MB(b *testing.B) {
	root := newTestRoot(b, nil)
	writeNumbered(b, filepath.Join(root.Dir(), "big.log"), 50<<20)
	tool := readFile{root}
	args := json.RawMessage(`{"path":"big.log"}`)
	b.ReportAllocs()
	b.SetBytes(50 << 20)
	for b.Loop() {
		if _, err := tool.Run(context.Background(), args); err != nil {
			b.Fatal(err)
		}
	}
}
