package batchrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/termtext"
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

// newStateDir makes the directory of a batch that may be left pending:
// a new one, never one that was there (a link planted under a shared
// state directory would send the batch's transcripts elsewhere).
func newStateDir(root string) (id, dir string, err error) {
	if root == "" {
		return "", "", fault.Usagef("--no-wait: no state directory to keep the pending batch in: set XDG_STATE_HOME or HOME")
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", "", fmt.Errorf("--no-wait: the state directory: %w", err)
	}
	if err := ownDir(root); err != nil {
		return "", "", fault.Usagef("--no-wait: %v", err)
	}
	id = history.NewID(time.Now())
	dir = filepath.Join(root, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("--no-wait: the state directory: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "runs"), 0o700); err != nil {
		return "", "", fmt.Errorf("--no-wait: the state directory: %w", err)
	}
	return id, dir, nil
}

// maxState bounds what is read of a state.json: its held and unstarted
// task lines are bounded one by one, not together, and a file planted
// huge must not take the memory of the machine.
const maxState = 256 << 20

// ownDir checks that path is a folder of this user's that no one else
// may write: a pending batch's state says where results go and with
// which settings its runs go on, so one that someone else could have
// written is not carried on.
func ownDir(path string) error {
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if info.Mode()&os.ModeSymlink != 0 || !info.IsDir() {
		return fmt.Errorf("%s is not a folder (a symbolic link?): a batch's state is kept in a folder of its own", path)
	}
	return ownedHere(path, info)
}

// ownedHere refuses a file or folder of another user, or one that
// others may write.
func ownedHere(path string, info os.FileInfo) error {
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to user %d, not to you (%d): a batch left by someone else is not carried on", path, st.Uid, os.Geteuid())
	}
	if info.Mode().Perm()&0o022 != 0 && info.Mode()&os.ModeSticky == 0 {
		return fmt.Errorf("%s may be written by others (mode %04o): chmod go-w it if it is yours", path, info.Mode().Perm())
	}
	return nil
}

// readState reads dir/state.json: never through a link, from this user,
// and bounded.
func readState(dir string) ([]byte, error) {
	if err := ownDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "state.json")
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: a batch's state is never read through one", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if err := ownedHere(path, info); err != nil {
		return nil, err
	}
	if info.Size() > maxState {
		return nil, fmt.Errorf("%s is %d MiB, more than a batch's state may be (%d MiB)", path, info.Size()>>20, maxState>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxState+1))
	if err == nil && len(data) > maxState {
		err = fmt.Errorf("%s is more than a batch's state may be (%d MiB)", path, maxState>>20)
	}
	return data, err
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

// batchIDPattern is what a provider's batch id looks like (Gemini's are
// "batches/…"): it goes into the URLs the state's batch is read from.
var batchIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`) })

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
		data, err := readState(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a batch being written, or left with nothing pending
		}
		if err != nil {
			return nil, "", fault.Usagef("--resume: %v", err)
		}
		var s State
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, "", fault.Usagef("--resume: %s is not a batch's state: %v; remove its folder", filepath.Join(dir, "state.json"), err)
		}
		if !batchIDPattern().MatchString(s.BatchID) || strings.Contains(s.BatchID, "..") {
			return nil, "", fault.Usagef("--resume: %s names the batch \"%s\", which is not a batch id; remove its folder", filepath.Join(dir, "state.json"), termtext.Safe(termtext.Shorten(s.BatchID, 80)))
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

// readNoFollow reads a file the state keeps (a held run's transcript),
// never through a link.
func readNoFollow(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: a batch's state is never read through one", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxState))
}
