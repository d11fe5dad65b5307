package history

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLastRunIsWholeOrAbsent checks that a kept run appears only when it
// is complete, that runs at once keep their own lines, whether a copy was
// held in memory or outgrew it, and that no temporary files are left. A
// copy that outgrew memory waits in its unnamed file where the system has
// them, and in a named temporary file where it has not.
func TestLastRunIsWholeOrAbsent(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "runs")
	aPath, bPath := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	a, err := openRecording(aPath)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := openRecording(bPath)
	big := strings.Repeat("b", memoryCopyLimit/2) + "\n"
	a.Writer().Write([]byte("a1\n"))
	b.Writer().Write([]byte(big))
	a.Writer().Write([]byte("a2\n"))
	b.Writer().Write([]byte(big)) // past the limit: b goes on in a file
	for _, p := range []string{aPath, bPath} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s exists before its run finished", filepath.Base(p))
		}
	}
	wantTemps := 1
	if f := OpenUnnamed(t.TempDir()); f != nil {
		f.Close()
		wantTemps = 0
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, lastTempPattern)); len(temps) != wantTemps {
		t.Errorf("temporary copies while b runs: %v, want %d", temps, wantTemps)
	}
	for _, l := range []*Recording{a, b} {
		if err := l.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(aPath); string(got) != "a1\na2\n" {
		t.Errorf("a kept %q", got)
	}
	if got, _ := os.ReadFile(bPath); string(got) != big+big {
		t.Errorf("b kept %d bytes, want %d", len(got), 2*len(big))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files left: %v", entries)
	}
	for _, p := range []string{aPath, bPath} {
		if info, _ := os.Stat(p); info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600: it holds prompts and answers", filepath.Base(p), info.Mode().Perm())
		}
	}
	// A copy is never written over a kept run of the same id.
	again, _ := openRecording(aPath)
	again.Writer().Write([]byte("other\n"))
	if err := again.Commit(); err == nil {
		t.Error("a second copy under a's id was kept")
	}
	if got, _ := os.ReadFile(aPath); string(got) != "a1\na2\n" {
		t.Errorf("after a second copy under its id, a holds %q", got)
	}
	var none *Recording
	if none.Writer() != nil || none.Commit() != nil {
		t.Error("a nil Recording is not a no-op")
	}
}

// Where no unnamed file could be opened (a file system without O_TMPFILE),
// the copy held in memory is kept by creating its file by name, as whole.
func TestLastRunWithoutUnnamedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runs", "a.jsonl")
	none := make(chan *os.File, 1)
	none <- nil
	l := &Recording{path: path, early: none}
	l.Writer().Write([]byte("a1\n"))
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the copy exists before its run finished")
	}
	if err := l.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "a1\n" {
		t.Errorf("kept %q", got)
	}
}

// A copy that another process replaced or rewrote while the run wrote it
// is never renamed into place as the last run.
func TestLastRunKeepsOnlyWhatItWrote(t *testing.T) {
	t.Parallel()
	written := []byte("a" + strings.Repeat("1", memoryCopyLimit) + "\n")
	for _, tamper := range []struct {
		name string
		do   func(t *testing.T, tmp string)
	}{
		{"replaced by another file of the same bytes", func(t *testing.T, tmp string) {
			other := tmp + ".evil"
			if err := os.WriteFile(other, written, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(other, tmp); err != nil {
				t.Fatal(err)
			}
		}},
		{"rewritten in place, same size", func(t *testing.T, tmp string) {
			if err := os.WriteFile(tmp, append([]byte("b"), written[1:]...), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tamper.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "ask", "last.jsonl")
			l, err := openRecording(path)
			if err != nil {
				t.Fatal(err)
			}
			// The named temporary file, which other processes can
			// reach: where no unnamed file can be opened, a large run's
			// copy waits in it while the run goes on.
			if f := l.takeEarly(); f != nil {
				f.Close()
			}
			l.Writer().Write(written)
			tamper.do(t, l.f.Name())
			if err := l.Commit(); err == nil {
				t.Error("commit kept a copy it did not write")
			}
			if _, err := os.Stat(path); err == nil {
				t.Error("last.jsonl exists")
			}
		})
	}
}

// BenchmarkKeepLargeRun keeps a run whose copy outgrew memory (8 MB, in
// lines of 4 KB): in the unnamed file, named when it ends, against a named
// temporary file, which is read again and hashed before it is renamed.
//
//	go test -run '^$' -bench KeepLargeRun ./internal/run
func BenchmarkKeepLargeRun(b *testing.B) {
	line := []byte(strings.Repeat("x", 4095) + "\n")
	for _, named := range []bool{false, true} {
		name := "unnamed"
		if named {
			name = "named"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			b.SetBytes(8 << 20)
			i := 0
			for b.Loop() {
				i++
				l, err := openRecording(filepath.Join(dir, "runs", strconv.Itoa(i)+".jsonl"))
				if err != nil {
					b.Fatal(err)
				}
				if named {
					if f := l.takeEarly(); f != nil {
						f.Close()
					}
				}
				for range (8 << 20) / len(line) {
					l.Writer().Write(line)
				}
				if err := l.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestKeepAgain: a run carried on (ask batch --resume) replaces its kept
// file with the whole transcript, held in memory or grown past it, and
// keeps it where the history had pruned it; no temporary file is left.
func TestKeepAgain(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", memoryCopyLimit) + "\n"
	for _, tt := range []struct {
		name   string
		exists bool
		more   string
	}{
		{"replaces", true, "second\n"},
		{"pruned before", false, "second\n"},
		{"past memory", true, big},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := Store{Dir: filepath.Join(t.TempDir(), "runs")}
			id := "20261127-120000.000000-00ab"
			if tt.exists {
				os.MkdirAll(s.Dir, 0o700)
				os.WriteFile(s.Path(id), []byte("first\n"), 0o600)
			}
			rec, err := s.KeepAgain(id, []byte("first\n"))
			if err != nil {
				t.Fatal(err)
			}
			rec.Writer().Write([]byte(tt.more))
			if err := rec.Commit(); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(s.Path(id))
			if string(got) != "first\n"+tt.more {
				t.Errorf("kept %d bytes, want %d", len(got), len("first\n"+tt.more))
			}
			if temps, _ := filepath.Glob(filepath.Join(s.Dir, lastTempPattern)); len(temps) != 0 {
				t.Errorf("left %v", temps)
			}
		})
	}
	if _, err := (&Store{Dir: t.TempDir()}).KeepAgain("../x", nil); err == nil {
		t.Error("a name that is not a run id was taken")
	}
}
