package batchrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/history"
)

// A batch left pending (--no-wait) is kept under the state directory
// ($XDG_STATE_HOME/ask/batches/ID/), so that `ask batch --resume` picks it
// up later, here or on another machine that shares the directory: its
// state.json, and runs/N.jsonl, the transcript of each run waiting in it.
// Nothing in it is a path of this machine but the working directories the
// tasks name; the key is never kept.

// stateVersion is the form of state.json this ask writes and reads.
const stateVersion = 1

// State is a pending batch.
type State struct {
	Version int       `json:"version"`
	Created time.Time `json:"created"`
	// Provider and BaseURL are where the batch went; BatchID is the
	// provider's id of it.
	Provider string `json:"provider"`
	BaseURL  string `json:"base_url"`
	BatchID  string `json:"batch_id"`
	// Output is --output as it was given ("" for stdout), Jobs -j, Shard
	// --shard ("" for none).
	Output string `json:"output,omitempty"`
	Jobs   int    `json:"jobs"`
	Shard  string `json:"shard,omitempty"`
	// Flags are the command line's run settings, as a task line gives
	// them.
	Flags json.RawMessage `json:"flags,omitempty"`
	// Held are the tasks whose request waits in the batch; Unstarted the
	// task lines not started when the batch was left.
	Held      []HeldTask `json:"held"`
	Unstarted []TaskLine `json:"unstarted,omitempty"`

	id string // the directory's name
}

// HeldTask is a task whose run waits for its request's reply.
type HeldTask struct {
	Task  TaskLine `json:"task"`
	RunID string   `json:"run_id"`
	// Transcript names the run's transcript under runs/.
	Transcript string `json:"transcript"`
	// CustomID is the request's in the batch; Tries counts the rounds it
	// went in before.
	CustomID string `json:"custom_id"`
	Tries    int    `json:"tries"`
}

// TaskLine is a line of the task file and its number.
type TaskLine struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// ID is the pending batch's name, for --resume.
func (s *State) ID() string { return s.id }

// batchesDir is where pending batches are kept, "" when the environment
// names no state directory.
func batchesDir(getenv func(string) string) string {
	if d := history.StateDir(getenv); d != "" {
		return filepath.Join(d, "batches")
	}
	return ""
}

// newStateDir makes the directory of a batch that may be left pending.
func newStateDir(root string) (id, dir string, err error) {
	if root == "" {
		return "", "", fault.Usagef("--no-wait: no state directory to keep the pending batch in: set XDG_STATE_HOME or HOME")
	}
	id = history.NewID(time.Now())
	dir = filepath.Join(root, id)
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o700); err != nil {
		return "", "", fmt.Errorf("--no-wait: the state directory: %w", err)
	}
	return id, dir, nil
}

// save writes the state to dir/state.json, whole or not at all.
func (s *State) save(dir string) error {
	s.Version = stateVersion
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".state-*.json")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(data, '\n'))
	if err = errors.Join(err, tmp.Sync(), tmp.Close()); err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, "state.json"))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// idPattern is what a kept batch's name and a provider's batch id look
// like; anything else is refused before it names a file. It compiles on
// first use, not at every start of ask.
var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })

// loadState reads the pending batch ref names: its name (or the start of
// it) or the provider's batch id; "" for the newest.
func loadState(root, ref string) (*State, string, error) {
	none := fault.Usagef("--resume: no pending batch is kept in %s (ask batch --batch-api --no-wait leaves one)", root)
	if root == "" {
		return nil, "", fault.Usagef("--resume: no state directory: set XDG_STATE_HOME or HOME")
	}
	if ref != "" && !idPattern().MatchString(ref) {
		return nil, "", fault.Usagef("--resume %q: not a batch id", ref)
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", none
	}
	if err != nil {
		return nil, "", fmt.Errorf("--resume: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && history.IsID(e.Name()) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for _, name := range slices.Backward(names) {
		dir := filepath.Join(root, name)
		data, err := os.ReadFile(filepath.Join(dir, "state.json"))
		if err != nil {
			continue // a batch being written, or left with nothing pending
		}
		var s State
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, "", fmt.Errorf("--resume: %s: %w", filepath.Join(dir, "state.json"), err)
		}
		if ref != "" && !strings.HasPrefix(name, ref) && s.BatchID != ref {
			continue
		}
		if s.Version != stateVersion {
			return nil, "", fault.Usagef("--resume: %s was written by another version of ask (form %d, this one reads %d)", dir, s.Version, stateVersion)
		}
		s.id = name
		return &s, dir, nil
	}
	if ref != "" {
		return nil, "", fault.Usagef("--resume %s: no pending batch by that id in %s", ref, root)
	}
	return nil, "", none
}
