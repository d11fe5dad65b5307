package run

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLastRunIsWholeOrAbsent checks that a kept run replaces the earlier
// one only when it is complete, and that no temporary files are left.
func TestLastRunIsWholeOrAbsent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ask", "last.jsonl")
	a, err := openLastRun(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := openLastRun(path)
	a.writer().Write([]byte("a1\n"))
	b.writer().Write([]byte("b1\n"))
	a.writer().Write([]byte("a2\n"))
	if _, err := os.Stat(path); err == nil {
		t.Fatal("last.jsonl exists before any run finished")
	}
	if err := a.commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "a1\na2\n" {
		t.Errorf("after a: %q", got)
	}
	b.commit()
	if got, _ := os.ReadFile(path); string(got) != "b1\n" {
		t.Errorf("after b: %q", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("last.jsonl mode %v, want 0600: it holds prompts and answers", info.Mode().Perm())
	}
	var none *lastRun
	if none.writer() != nil || none.commit() != nil {
		t.Error("a nil lastRun is not a no-op")
	}
}

// FuzzParseConversation: any transcript bytes give a conversation with a
// history, or an error; never a panic.
func FuzzParseConversation(f *testing.F) {
	f.Add([]byte(`{"type":"run.started","provider":"openai","settings":{"tools":["read_file"]}}` + "\n" +
		`{"type":"run.finished","history":[{"role":"user","content":"x"}]}` + "\n"))
	f.Add([]byte(`{"type":"run.started"}` + "\n" + `{"type":"run.finished"}`))
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseConversation(data)
		if err == nil && len(p.History) == 0 {
			t.Fatalf("accepted a conversation without history: %q", data)
		}
	})
}

// A copy that another process replaced or rewrote while the run wrote it
// is never renamed into place as the last run.
func TestLastRunKeepsOnlyWhatItWrote(t *testing.T) {
	t.Parallel()
	for _, tamper := range []struct {
		name string
		do   func(t *testing.T, tmp string)
	}{
		{"replaced by another file", func(t *testing.T, tmp string) {
			other := tmp + ".evil"
			if err := os.WriteFile(other, []byte("a1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(other, tmp); err != nil {
				t.Fatal(err)
			}
		}},
		{"rewritten in place, same size", func(t *testing.T, tmp string) {
			if err := os.WriteFile(tmp, []byte("b1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tamper.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "ask", "last.jsonl")
			l, err := openLastRun(path)
			if err != nil {
				t.Fatal(err)
			}
			l.writer().Write([]byte("a1\n"))
			tamper.do(t, l.f.Name())
			if err := l.commit(); err == nil {
				t.Error("commit kept a copy it did not write")
			}
			if _, err := os.Stat(path); err == nil {
				t.Error("last.jsonl exists")
			}
		})
	}
}
