package history

import (
	"os"
	"path/filepath"
	"testing"
)

// A file from OpenUnnamed is in no listing until Link names it, is named
// whole, never over a kept run, and is gone if it is never named: a run
// killed on its way leaves nothing behind.
func TestUnnamedFileIsListedOnlyOnceLinked(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "runs")
	listing := func() []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	f := OpenUnnamed(dir)
	if f == nil {
		t.Fatal("no unnamed file in a temporary directory (O_TMPFILE)")
	}
	if names := listing(); len(names) != 0 {
		t.Fatalf("an unnamed file is listed: %v", names)
	}
	path := filepath.Join(dir, "kept.jsonl")
	if err := Link(f, []byte("one\n"), path); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "one\n" {
		t.Errorf("named file holds %q", got)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600: a run holds prompts and answers", info.Mode().Perm())
	}

	again := OpenUnnamed(dir)
	if err := Link(again, []byte("two\n"), path); err == nil {
		t.Error("a second file was named over a kept one")
	}
	if got, _ := os.ReadFile(path); string(got) != "one\n" {
		t.Errorf("after a second file under its name, the kept one holds %q", got)
	}

	abandoned := OpenUnnamed(dir)
	abandoned.Write([]byte("never named\n"))
	abandoned.Close()
	if names := listing(); len(names) != 1 || names[0] != "kept.jsonl" {
		t.Errorf("files in the directory: %v, want kept.jsonl alone", names)
	}
}
