// Package history keeps every run's transcript under
// $XDG_STATE_HOME/ask/runs (default ~/.local/state/ask/runs), one file a
// run, named by its id, so that past runs can be listed, searched and
// continued (DESIGN §6).
//
// Runs in parallel share nothing but the directory: each writes its own
// file when it ends (internal/run), and the list is read from the files
// themselves, so there is no index to keep in step. Pruning removes the
// oldest files past the limits; two runs pruning at once remove the same
// files, which is harmless.
package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	mathrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/bytesize"
	"github.com/ask-cli/ask/internal/noblock"
	"github.com/ask-cli/ask/internal/owned"
	"github.com/ask-cli/ask/internal/records"
)

// Defaults of the limits; ASK_HISTORY_RUNS and ASK_HISTORY_SIZE change
// them.
const (
	DefaultMaxRuns  = 500
	DefaultMaxBytes = 100 << 20
)

// Store is the directory of kept runs and its limits.
type Store struct {
	// Dir is where the runs are; "" keeps nothing.
	Dir      string
	MaxRuns  int
	MaxBytes int64
}

// Open is the store the environment describes. A relative XDG_STATE_HOME
// is ignored, as the XDG base directory specification asks; without it
// or HOME, Dir is "". A limit that cannot be read is an error.
func Open(getenv func(string) string) (Store, error) {
	s := Store{MaxRuns: DefaultMaxRuns, MaxBytes: DefaultMaxBytes}
	if state := StateDir(getenv); state != "" {
		s.Dir = filepath.Join(state, "runs")
	}
	if v := getenv("ASK_HISTORY_RUNS"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return s, fmt.Errorf("ASK_HISTORY_RUNS=%q: give a whole number of runs to keep (0 keeps none)", v)
		}
		s.MaxRuns = n
	}
	if v := getenv("ASK_HISTORY_SIZE"); v != "" {
		n, err := bytesize.Parse(v)
		if err != nil {
			return s, fmt.Errorf("ASK_HISTORY_SIZE=%q: %v; give a size such as 50M", v, err)
		}
		s.MaxBytes = n
	}
	if s.MaxRuns == 0 || s.MaxBytes == 0 {
		s.Dir = ""
	}
	return s, nil
}

// StateDir is ask's directory under $XDG_STATE_HOME, or "" when neither
// XDG_STATE_HOME nor HOME says where.
func StateDir(getenv func(string) string) string {
	dir := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "ask")
}

// NewID is a new run's id: its start time in UTC to the microsecond, so
// that ids sort as the runs started (-c continues the newest), and a
// random suffix, so that runs started at once differ. The suffix needs no
// secrecy, and math/rand spares each run crypto/rand's first read.
func NewID(now time.Time) string {
	return fmt.Sprintf("%s-%04x", now.UTC().Format("20060102-150405.000000"), mathrand.N(1<<16))
}

// idShape is the form of a run id, 20261123-100000.000000-1a2b: d a
// decimal digit, x a lowercase hexadecimal one, and every other byte
// itself.
const idShape = "dddddddd-dddddd.dddddd-xxxx"

// IsID reports whether s has the form of a run id. Prune asks it of every
// file in the directory, so it is a comparison with idShape, not a regular
// expression (FuzzIsID holds the two to the same answers).
func IsID(s string) bool {
	if len(s) != len(idShape) {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch idShape[i] {
		case 'd':
			if c < '0' || c > '9' {
				return false
			}
		case 'x':
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		default:
			if c != idShape[i] {
				return false
			}
		}
	}
	return true
}

// Path is where the run id is kept.
func (s Store) Path(id string) string { return filepath.Join(s.Dir, id+".jsonl") }

// Entry is one kept run, as `ask log --json` shows it.
type Entry struct {
	ID       string    `json:"id"`
	Time     time.Time `json:"time"`
	Workdir  string    `json:"workdir"`
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	Prompt   string    `json:"prompt"`
	// Status is run.finished's; "unfinished" for a run killed before it.
	Status string `json:"status"`
	// ParentID is the run whose agent tool started this one, "" for a
	// run of its own.
	ParentID string `json:"parent_id,omitempty"`
	Answer   string `json:"-"`
	Path     string `json:"-"`
	// Depth is how many parents the entry has in a Nest-ed list.
	Depth int `json:"-"`
}

// Nest orders runs (newest first, as List gives them) as a tree: each
// run's children (subagents) follow it, oldest first, one level deeper. A
// child whose parent is not among runs stays where it is.
func Nest(runs []Entry) []Entry {
	present := map[string]bool{}
	children := map[string][]Entry{}
	for _, e := range runs {
		present[e.ID] = true
	}
	for _, e := range slices.Backward(runs) {
		if e.ParentID != "" && present[e.ParentID] && e.ParentID != e.ID {
			children[e.ParentID] = append(children[e.ParentID], e)
		}
	}
	out := make([]Entry, 0, len(runs))
	var add func(e Entry, depth int)
	add = func(e Entry, depth int) {
		e.Depth = depth
		out = append(out, e)
		kids := children[e.ID]
		delete(children, e.ID) // a cycle of ids cannot loop
		for _, c := range kids {
			add(c, depth+1)
		}
	}
	for _, e := range runs {
		if e.ParentID == "" || !present[e.ParentID] || e.ParentID == e.ID {
			add(e, 0)
		}
	}
	return out
}

// ids are the kept runs' ids, oldest first.
func (s Store) ids() ([]string, error) {
	if s.Dir == "" {
		return nil, nil
	}
	names, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range names {
		if id, ok := strings.CutSuffix(n.Name(), ".jsonl"); ok && IsID(id) && n.Type().IsRegular() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// List reads every kept run, newest first. A file that cannot be read as
// a transcript is left out.
func (s Store) List() ([]Entry, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, id := range slices.Backward(ids) {
		if e, err := s.read(id, true); err == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// Last is the newest run kept whose working directory is workdir; false
// when there is none.
func (s Store) Last(workdir string) (Entry, bool, error) {
	ids, err := s.ids()
	if err != nil {
		return Entry{}, false, err
	}
	for _, id := range slices.Backward(ids) {
		// A subagent's run is carried on through its parent, not alone.
		if e, err := s.read(id, false); err == nil && e.Workdir == workdir && e.ParentID == "" {
			return e, true, nil
		}
	}
	return Entry{}, false, nil
}

// Find is the run of id, or of the one id that starts with it.
func (s Store) Find(id string) (Entry, error) {
	ids, err := s.ids()
	if err != nil {
		return Entry{}, err
	}
	var match []string
	for _, have := range ids {
		if have == id {
			match = []string{id}
			break
		}
		if id != "" && strings.HasPrefix(have, id) {
			match = append(match, have)
		}
	}
	switch len(match) {
	case 0:
		return Entry{}, fmt.Errorf("no kept run has id %q (ask log lists them)", id)
	case 1:
		return s.read(match[0], true)
	}
	const shown = 5
	total := len(match)
	slices.Reverse(match) // newest first, as ask log lists them
	more := ""
	if total > shown {
		more = fmt.Sprintf(" and %d more", total-shown)
		match = match[:shown]
	}
	return Entry{}, fmt.Errorf("%q is the start of %d run ids: %s%s; give more of it", id, total, strings.Join(match, ", "), more)
}

// LastWord names the newest run of a directory wherever an id is taken.
const LastWord = "last"

// Resolve is the run ref names: "last" for the newest run whose working
// directory is workdir, else an id or the start of one (Find).
func (s Store) Resolve(ref, workdir string) (Entry, error) {
	if ref != LastWord {
		return s.Find(ref)
	}
	e, ok, err := s.Last(workdir)
	switch {
	case err != nil:
		return Entry{}, err
	case !ok:
		return Entry{}, fmt.Errorf("no kept run in %s (ask log lists the runs of every directory)", workdir)
	}
	return s.read(e.ID, true)
}

// read reads the entry of run id: from its first event only, or, with
// whole, from its last too (status and answer).
func (s Store) read(id string, whole bool) (Entry, error) {
	path := s.Path(id)
	// A run someone else could have written (a shared state directory)
	// is not read as the person's: it says what ask resume runs and what
	// --continue sends.
	if dir, err := os.Stat(s.Dir); err != nil || !dir.IsDir() || owned.Why(dir) != "" {
		why := "it is not a folder"
		if err == nil && dir.IsDir() {
			why = owned.Why(dir)
		}
		return Entry{}, fmt.Errorf("%s: %s, so its runs may not be yours: chmod go-w it if it is yours", s.Dir, why)
	}
	f, info, err := noblock.Open(path)
	if err != nil {
		return Entry{}, err
	}
	defer f.Close()
	if !info.Mode().IsRegular() {
		return Entry{}, fmt.Errorf("%s is not a transcript", path)
	}
	if why := owned.Why(info); why != "" {
		return Entry{}, fmt.Errorf("%s: %s, so it may not be your run", path, why)
	}
	br := bufio.NewReader(f)
	first, err := br.ReadBytes('\n')
	if err != nil {
		return Entry{}, err
	}
	var start records.Event
	if err := json.Unmarshal(first, &start); err != nil || start.Type != records.TypeRunStarted {
		return Entry{}, fmt.Errorf("%s is not a transcript", path)
	}
	e := Entry{ID: id, Time: start.Time, Provider: start.Provider, Model: start.Model, Path: path, Status: "unfinished", ParentID: start.ParentID}
	if start.Settings != nil {
		e.Workdir, e.Prompt = start.Settings.Workdir, start.Settings.Prompt
	}
	if !whole {
		return e, nil
	}
	var last []byte
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			last = line
		}
		if err != nil {
			break
		}
	}
	var end records.Event
	if json.Unmarshal(last, &end) == nil && end.Type == records.TypeRunFinished {
		e.Status = end.Status
		if end.Answer != nil {
			e.Answer = *end.Answer
		}
	}
	return e, nil
}

// Search is the kept runs whose prompt or answer holds text, case
// ignored, newest first.
func (s Store) Search(text string) ([]Entry, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	needle := strings.ToLower(text)
	var out []Entry
	for _, e := range all {
		if strings.Contains(strings.ToLower(e.Prompt), needle) || strings.Contains(strings.ToLower(e.Answer), needle) {
			out = append(out, e)
		}
	}
	return out, nil
}

// pruneEvery is how often, on average, a kept run prunes the others.
const pruneEvery = 16

// PruneAfter is Prune after a run of added bytes was kept, amortized:
// reading the directory and a stat a kept run (500 by default) is most of
// what keeping a run costs. A run larger than its share of MaxBytes
// prunes, and else about one run in pruneEvery; in between, when MaxRuns
// is under 10×pruneEvery, every run still counts the runs by their names
// and removes the oldest past it. So the runs may pass the limits between
// two prunes, by runs smaller than their share: by the defaults, about 16
// runs and 3 MB.
func (s Store) PruneAfter(added int64) error {
	share := s.MaxBytes / int64(max(s.MaxRuns, 1))
	switch {
	case added > share || mathrand.N(pruneEvery) == 0:
		return s.prune(true)
	case s.MaxRuns < 10*pruneEvery:
		return s.prune(false)
	}
	return nil
}

// Prune removes the oldest runs until at most MaxRuns are kept, holding
// at most MaxBytes together; the newest run always stays. It is best
// effort: a file another run removed first is gone either way.
func (s Store) Prune() error { return s.prune(true) }

// prune removes the oldest runs past MaxRuns and, with sizes, past
// MaxBytes.
func (s Store) prune(sizes bool) error {
	ids, err := s.ids()
	if err != nil || len(ids) == 0 {
		return err
	}
	// A stat a kept run is most of a prune's time: they go through one
	// handle on the directory, which spares each the lookup of the
	// directories above it.
	dir, err := os.OpenRoot(s.Dir)
	if err != nil {
		return err
	}
	defer dir.Close()
	var total int64
	kept := 0
	var errs []error
	for _, id := range slices.Backward(ids) {
		name := id + ".jsonl"
		kept++
		if sizes {
			info, err := dir.Lstat(name)
			if err != nil {
				kept--
				continue
			}
			total += info.Size()
		}
		if kept == 1 || kept <= s.MaxRuns && total <= s.MaxBytes {
			continue
		}
		if err := dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Migrate moves the one transcript older versions kept
// ($XDG_STATE_HOME/ask/last.jsonl) into the store, so that -c still finds
// it. The rename is atomic: of two runs migrating at once, one moves it.
func (s Store) Migrate(getenv func(string) string) {
	state := StateDir(getenv)
	if s.Dir == "" || state == "" {
		return
	}
	old := filepath.Join(state, "last.jsonl")
	info, err := os.Lstat(old)
	if err != nil || !info.Mode().IsRegular() {
		return
	}
	if os.MkdirAll(s.Dir, 0o700) != nil {
		return
	}
	os.Rename(old, s.Path(NewID(info.ModTime())))
}
