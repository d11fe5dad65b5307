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

// TestLoadStateRefusesWhatOthersCouldWrite attacks a shared state
// directory: a pending batch's state says where results go and which
// settings its runs take, so one planted by a link, writable by others,
// huge, malformed or naming a batch id that is a path is refused, naming
// the file, before anything is sent or written.
func TestLoadStateRefusesWhatOthersCouldWrite(t *testing.T) {
	t.Parallel()
	good := `{"version":1,"provider":"openai","batch_id":"batch_1","output":"out.jsonl","held":[]}`
	tests := []struct {
		name  string
		plant func(t *testing.T, dir string)
		err   string
	}{
		{"a linked state.json", func(t *testing.T, dir string) {
			elsewhere := filepath.Join(t.TempDir(), "state.json")
			os.WriteFile(elsewhere, []byte(good), 0o600)
			os.Symlink(elsewhere, filepath.Join(dir, "state.json"))
		}, "is a symbolic link"},
		{"a state others may write", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "state.json"), []byte(good), 0o600)
			os.Chmod(filepath.Join(dir, "state.json"), 0o666)
		}, "may be written by others (mode 0666)"},
		{"a folder others may write", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "state.json"), []byte(good), 0o600)
			os.Chmod(dir, 0o777)
		}, "may be written by others (mode 0777)"},
		{"malformed", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"version":1,"batch_id":`), 0o600)
		}, "is not a batch's state"},
		{"a batch id that is a path", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "state.json"), []byte(strings.Replace(good, "batch_1", "../../files/x", 1)), 0o600)
		}, `names the batch "../../files/x", which is not a batch id`},
		{"a batch id with escapes", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "state.json"), []byte(strings.Replace(good, "batch_1", `b\u001b]52;c;eA==\u0007`, 1)), 0o600)
		}, `names the batch "b\u001b]52;c;eA==\u0007"`},
		{"huge", func(t *testing.T, dir string) {
			f, _ := os.Create(filepath.Join(dir, "state.json"))
			f.Truncate(maxState + 1) // sparse: no disk, and must not be read whole
			f.Close()
		}, "more than a batch's state may be (256 MiB)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			dir := filepath.Join(root, "20261127-100000.000000-aaaa")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			tt.plant(t, dir)
			_, _, err := loadState(root, "")
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			if strings.ContainsAny(err.Error(), "\x1b\x07") {
				t.Errorf("the error carries raw control characters: %q", err)
			}
			if k, _ := fault.KindOf(err); k.Code() != 2 {
				t.Errorf("exit code %d, want 2", k.Code())
			}
		})
	}
}

// TestNewStateDirIsNew: a folder planted where a new batch's state goes
// (a link to elsewhere) is never written into.
func TestNewStateDirIsNew(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := newStateDir(filepath.Join(root, "link")); err == nil || !strings.Contains(err.Error(), "is not a folder") {
		t.Errorf("a linked state root: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("written through the link: %v", entries)
	}
}
