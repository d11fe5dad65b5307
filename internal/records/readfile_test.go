package records

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	whole := write("whole.jsonl", `{"type":"run.started"}`+"\n"+`{"type":"run.finished"}`+"\n")
	cut := write("cut.jsonl", `{"type":"run.started"}`+"\n"+`{"type":`)
	for _, tt := range []struct {
		name    string
		path    string
		events  int
		wantErr string
	}{
		{"whole", whole, 2, ""},
		{"cut short: the events before the fault", cut, 1, cut + ": transcript line 2: "},
		{"missing", filepath.Join(dir, "none.jsonl"), 0, "open " + filepath.Join(dir, "none.jsonl")},
	} {
		events, err := ReadFile(tt.path)
		if len(events) != tt.events {
			t.Errorf("%s: %d events, want %d", tt.name, len(events), tt.events)
		}
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
			t.Errorf("%s: %v, want an error starting %q", tt.name, err, tt.wantErr)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "none.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}
