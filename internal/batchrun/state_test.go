package batchrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/batch"
	"github.com/ask-cli/ask/internal/fault"
)

// TestLoadState: --resume takes the newest pending batch, or the one its
// id names (the start of ask's id, or the provider's batch id); a
// directory without a state (a batch that left nothing pending) is passed
// over; none is a usage error, as is a state of another form.
func TestLoadState(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	keep := func(id, batchID string, version int) {
		dir := filepath.Join(root, id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		s := State{Provider: "openai", BatchID: batchID}
		if err := s.save(dir); err != nil {
			t.Fatal(err)
		}
		if version != stateVersion {
			data, _ := os.ReadFile(filepath.Join(dir, "state.json"))
			os.WriteFile(filepath.Join(dir, "state.json"), []byte(strings.Replace(string(data), `"version": 1`, `"version": 9`, 1)), 0o600)
		}
	}
	keep("20261127-100000.000000-aaaa", "batch_old", stateVersion)
	keep("20261127-110000.000000-bbbb", "batch_new", stateVersion)
	keep("20261127-090000.000000-cccc", "batch_odd", 9)
	os.MkdirAll(filepath.Join(root, "20261127-120000.000000-dddd"), 0o700) // no state.json
	tests := []struct {
		ref, want, err string
	}{
		{"", "batch_new", ""},
		{"20261127-10", "batch_old", ""},
		{"batch_old", "batch_old", ""},
		{"batch_none", "", "no pending batch by that id"},
		{"../x", "", "not a batch id"},
		{"20261127-09", "", "another version of ask"},
	}
	for _, tt := range tests {
		s, _, err := loadState(root, tt.ref)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.ref, err, tt.err)
			} else if k, _ := fault.KindOf(err); k.Code() != 2 {
				t.Errorf("%q: exit code %d, want 2", tt.ref, k.Code())
			}
		case err != nil:
			t.Errorf("%q: %v", tt.ref, err)
		case s.BatchID != tt.want:
			t.Errorf("%q: %s, want %s", tt.ref, s.BatchID, tt.want)
		}
	}
	if _, _, err := loadState(filepath.Join(root, "none"), ""); err == nil || !strings.Contains(err.Error(), "no pending batch is kept") {
		t.Errorf("an empty state directory: %v", err)
	}
}

// TestProgressLine: a pending task is done for the line, not failed.
func TestProgressLine(t *testing.T) {
	t.Parallel()
	p := NewProgress(nil, false)
	for _, r := range []batch.Result{{ID: "a", Status: "completed"}, {ID: "b", Status: batch.StatusPending}, {ID: "c", Status: "error", ExitCode: 3}} {
		p.Started(batch.Task{})
		p.Ended(r)
	}
	p.Started(batch.Task{})
	p.Started(batch.Task{})
	p.Unstarted(batch.Task{})
	if line := p.Line(); !strings.HasPrefix(line, "ask batch: 3 done · 1 failed · 1 running · 0 tokens") {
		t.Errorf("%q", line)
	}
}
