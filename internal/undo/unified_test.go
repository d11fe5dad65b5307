package undo

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/patch")

// TestFilePatch checks the patch of each kind of change against its
// golden file (go test -update rewrites them), and that git applies it.
func TestFilePatch(t *testing.T) {
	t.Parallel()
	lines := func(from, to int) string {
		var sb strings.Builder
		for i := from; i <= to; i++ {
			sb.WriteString("line " + string(rune('a'+i%26)) + "\n")
		}
		return sb.String()
	}
	long := lines(0, 30)
	for _, tc := range []struct {
		name          string
		path          string
		before, after *string
		exec          bool
	}{
		{name: "edit_middle", path: "notes.txt", before: ptr("alpha\nbeta\ngamma\n"), after: ptr("alpha\nBETA\ngamma\n")},
		{name: "new_file", path: "dir/new.txt", after: ptr("one\ntwo\n")},
		{name: "new_empty", path: "empty", after: ptr("")},
		{name: "deleted", path: "gone.txt", before: ptr("bye\n")},
		{name: "deleted_exec", path: "run.sh", before: ptr("#!/bin/sh\necho hi\n"), exec: true},
		{name: "no_newline_after", path: "a", before: ptr("x\ny\n"), after: ptr("x\ny")},
		{name: "no_newline_before", path: "a", before: ptr("x\ny"), after: ptr("x\ny\nz\n")},
		{name: "two_hunks", path: "long.txt", before: &long, after: ptr(strings.Replace(strings.Replace(long, "line b\n", "line B\n", 1), "line z\n", "", 1))},
		{name: "hunks_merge", path: "long.txt", before: &long, after: ptr(strings.Replace(strings.Replace(long, "line b\n", "line B\n", 1), "line i\n", "line I\n", 1))},
		{name: "emptied", path: "a", before: ptr("x\n"), after: ptr("")},
		{name: "filled", path: "a", before: ptr(""), after: ptr("x\n")},
		{name: "quoted_path", path: "tab\there \"q\" é.txt", before: ptr("a\n"), after: ptr("b\n")},
		{name: "prepend_append", path: "a", before: ptr("m\n"), after: ptr("first\nm\nlast\n")},
		{name: "binary_new", path: "b.bin", after: ptr("\x00\x01\x02binary\xff")},
		{name: "binary_changed", path: "b.bin", before: ptr("\x00old"), after: ptr(strings.Repeat("\x00new and longer than one line of base85 ", 5))},
		{name: "binary_deleted", path: "b.bin", before: ptr("\x00\x01")},
		{name: "text_to_binary", path: "t", before: ptr("text\n"), after: ptr("\x00")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var before, after []byte
			if tc.before != nil {
				before = []byte(*tc.before)
			}
			if tc.after != nil {
				after = []byte(*tc.after)
			}
			var buf bytes.Buffer
			FilePatch(&buf, tc.path, before, after, tc.exec)
			golden := filepath.Join("testdata", "patch", tc.name+".patch")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("patch:\n%s\nwant:\n%s", got, want)
			}
			applies(t, tc.path, before, after, buf.Bytes())
		})
	}
}

func ptr(s string) *string { return &s }

// applies checks that git apply turns before into after with patch.
func applies(t *testing.T, path string, before, after, patch []byte) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, path)
	if before != nil {
		if err := os.WriteFile(file, before, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("git", "apply", "--unsafe-paths", "-")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(patch)
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\npatch:\n%s", err, out, patch)
	}
	got, err := os.ReadFile(file)
	switch {
	case after == nil && err == nil:
		t.Errorf("git apply left %s, which the patch deletes", path)
	case after == nil:
	case err != nil:
		t.Fatal(err)
	case !bytes.Equal(got, after):
		t.Errorf("git apply made %q, want %q", got, after)
	}
}

// TestFilePatchApplies checks, on random edits of random files, that git
// apply turns the content before into the content after with the patch.
func TestFilePatchApplies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "c\n", "d\n", "}\n", "\n", "e"}
	randomLines := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = strings.TrimSuffix(words[rng.IntN(len(words))], "e") + "x\n"
		}
		return out
	}
	n := 60
	if testing.Short() {
		n = 15
	}
	for i := 0; i < n; i++ {
		old := randomLines(rng.IntN(40))
		cur := append([]string(nil), old...)
		for e := rng.IntN(8); e > 0; e-- {
			at := 0
			if len(cur) > 0 {
				at = rng.IntN(len(cur))
			}
			switch rng.IntN(3) {
			case 0:
				cur = append(cur[:at], append(randomLines(1+rng.IntN(3)), cur[at:]...)...)
			case 1:
				if len(cur) > 0 {
					cur = append(cur[:at], cur[at+1:]...)
				}
			default:
				if len(cur) > 0 {
					cur[at] = "changed\n"
				}
			}
		}
		before, after := []byte(strings.Join(old, "")), []byte(strings.Join(cur, ""))
		if rng.IntN(4) == 0 {
			after = bytes.TrimSuffix(after, []byte("\n"))
		}
		var buf bytes.Buffer
		FilePatch(&buf, "f.txt", before, after, false)
		if bytes.Equal(before, after) {
			if buf.Len() != 0 {
				t.Errorf("a patch for no change: %s", buf.Bytes())
			}
			continue
		}
		applies(t, "f.txt", before, after, buf.Bytes())
	}
}

// TestEditsShortest checks that the edit script is a shortest one where
// the answer is known, and falls back to the whole middle past maxEdits.
func TestEditsShortest(t *testing.T) {
	t.Parallel()
	split := func(s string) [][]byte { return splitLines([]byte(s)) }
	for _, tc := range []struct {
		a, b    string
		changes int
	}{
		{"a\nb\nc\n", "a\nb\nc\n", 0},
		{"a\nb\nc\n", "a\nc\n", 1},
		{"a\nb\nc\nd\n", "b\na\nd\nc\n", 4},
		{"", "a\n", 1},
		{"a\nb\nc\na\nb\nb\na\n", "c\nb\na\nb\na\nc\n", 5}, // Myers' paper's example
	} {
		n := 0
		for _, o := range edits(split(tc.a), split(tc.b)) {
			if o.kind != ' ' {
				n++
			}
		}
		if n != tc.changes {
			t.Errorf("edits(%q, %q): %d changes, want %d", tc.a, tc.b, n, tc.changes)
		}
	}
}

// TestFilePatchPastMaxEdits checks the patch of two files too different
// for the shortest script to be searched: still one git applies.
func TestFilePatchPastMaxEdits(t *testing.T) {
	t.Parallel()
	var a, b strings.Builder
	for i := 0; i < maxEdits+500; i++ {
		fmt.Fprintf(&a, "old %d\nsame\n", i)
		fmt.Fprintf(&b, "new %d\nsame\n", i)
	}
	before, after := []byte("head\n"+a.String()+"tail\n"), []byte("head\n"+b.String()+"tail\n")
	var buf bytes.Buffer
	FilePatch(&buf, "f.txt", before, after, false)
	applies(t, "f.txt", before, after, buf.Bytes())
}
