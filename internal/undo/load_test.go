package undo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	started := `{"type":"run.started","settings":{"workdir":"/src/app"}}` + "\n"
	for _, tt := range []struct {
		name, path, wantDir, wantErr string
	}{
		{"whole", write("whole.jsonl", started+`{"type":"run.finished"}`+"\n"), "/src/app", ""},
		{"killed mid-write: read as far as it got", write("cut.jsonl", started+`{"type":"tool.fin`), "/src/app", ""},
		{"no workdir", write("old.jsonl", `{"type":"run.started"}`+"\n"), "", "run r1 does not record its working directory"},
		{"nothing readable", write("junk.jsonl", "not json\n"), "", filepath.Join(dir, "junk.jsonl") + ": transcript line 1: "},
		{"missing", filepath.Join(dir, "none.jsonl"), "", "open " + filepath.Join(dir, "none.jsonl")},
	} {
		run, err := Load(tt.path, "r1")
		if tt.wantErr == "" {
			if err != nil || run.Workdir != tt.wantDir {
				t.Errorf("%s: workdir %q, %v; want %q", tt.name, run.Workdir, err, tt.wantDir)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
			t.Errorf("%s: %v, want an error starting %q", tt.name, err, tt.wantErr)
		}
	}
}
