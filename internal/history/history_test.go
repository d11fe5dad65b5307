package history

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/records"
)

func TestStateDir(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/ask"},
		{map[string]string{"HOME": "/h"}, "/h/.local/state/ask"},
		{map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/h"}, "/h/.local/state/ask"},
		{map[string]string{}, ""},
	} {
		if got := StateDir(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("StateDir(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestOpenLimits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		env      map[string]string
		runs     int
		bytes    int64
		keeps    bool
		errorsOn string
	}{
		{map[string]string{"HOME": "/h"}, DefaultMaxRuns, DefaultMaxBytes, true, ""},
		{map[string]string{"HOME": "/h", "ASK_HISTORY_RUNS": "3", "ASK_HISTORY_SIZE": "2K"}, 3, 2048, true, ""},
		{map[string]string{"HOME": "/h", "ASK_HISTORY_RUNS": "0"}, 0, DefaultMaxBytes, false, ""},
		{map[string]string{"HOME": "/h", "ASK_HISTORY_RUNS": "-1"}, 0, 0, false, "ASK_HISTORY_RUNS"},
		{map[string]string{"HOME": "/h", "ASK_HISTORY_SIZE": "big"}, 0, 0, false, "ASK_HISTORY_SIZE"},
	} {
		s, err := Open(func(k string) string { return tt.env[k] })
		if tt.errorsOn != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errorsOn) {
				t.Errorf("Open(%v): error %v, want one naming %s", tt.env, err, tt.errorsOn)
			}
			continue
		}
		if err != nil || s.MaxRuns != tt.runs || s.MaxBytes != tt.bytes || (s.Dir != "") != tt.keeps {
			t.Errorf("Open(%v) = %+v, %v", tt.env, s, err)
		}
	}
}

// writeRun keeps a transcript of a run in workdir with prompt, finished
// with status, under an id of second sec.
func writeRun(t testing.TB, s Store, sec int, workdir, prompt, status string, pad int) string {
	t.Helper()
	start := time.Date(2026, 11, 23, 10, 0, sec, 0, time.UTC)
	id := NewID(start)
	answer := "answer to " + prompt
	var b strings.Builder
	for _, ev := range []records.Event{
		{Type: records.TypeRunStarted, Time: start, Provider: "openai", Model: "m", Settings: &records.Settings{Prompt: prompt, Workdir: workdir}},
		{Type: records.TypeRunFinished, Time: start, Status: status, Answer: &answer},
	} {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
		if ev.Type == records.TypeRunStarted {
			b.WriteString(`{"type":"assistant","time":"2026-11-23T10:00:00Z","text":"` + strings.Repeat("x", pad) + "\"}\n")
		}
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path(id), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestListLastFindSearch(t *testing.T) {
	t.Parallel()
	s := Store{Dir: t.TempDir(), MaxRuns: 10, MaxBytes: 1 << 20}
	a1 := writeRun(t, s, 1, "/a", "first in a", "completed", 0)
	b1 := writeRun(t, s, 2, "/b", "first in b", "max_steps", 0)
	a2 := writeRun(t, s, 3, "/a", "second in a", "completed", 0)
	os.WriteFile(filepath.Join(s.Dir, "notes.jsonl"), []byte("not a run\n"), 0o600)
	os.WriteFile(filepath.Join(s.Dir, "20261123-100009.000000-abcd.jsonl"), []byte("not a transcript\n"), 0o600)

	all, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range all {
		got = append(got, e.ID+" "+e.Workdir+" "+e.Status+" "+e.Prompt)
	}
	want := []string{a2 + " /a completed second in a", b1 + " /b max_steps first in b", a1 + " /a completed first in a"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List = %q\nwant %q", got, want)
	}
	for dir, wantID := range map[string]string{"/a": a2, "/b": b1} {
		e, ok, err := s.Last(dir)
		if err != nil || !ok || e.ID != wantID {
			t.Errorf("Last(%s) = %s, %v, %v; want %s", dir, e.ID, ok, err, wantID)
		}
	}
	if _, ok, _ := s.Last("/c"); ok {
		t.Error("Last(/c) found a run")
	}
	if e, err := s.Find(b1[:len(b1)-3]); err != nil || e.ID != b1 {
		t.Errorf("Find(prefix of %s) = %s, %v", b1, e.ID, err)
	}
	if _, err := s.Find("20261123-10000"); err == nil || !strings.Contains(err.Error(), "give more of it") {
		t.Errorf("Find(an ambiguous prefix): %v", err)
	}
	if _, err := s.Find("nope"); err == nil {
		t.Error("Find(nope) found a run")
	}
	found, err := s.Search("ANSWER TO FIRST")
	if err != nil || len(found) != 2 || found[0].ID != b1 || found[1].ID != a1 {
		t.Errorf("Search = %+v, %v", found, err)
	}
}

func TestPruneKeepsTheNewestWithinLimits(t *testing.T) {
	t.Parallel()
	s := Store{Dir: t.TempDir(), MaxRuns: 3, MaxBytes: 1 << 20}
	var ids []string
	for i := range 5 {
		ids = append(ids, writeRun(t, s, i, "/a", fmt.Sprint("run ", i), "completed", 0))
	}
	if err := s.Prune(); err != nil {
		t.Fatal(err)
	}
	all, _ := s.List()
	if len(all) != 3 || all[0].ID != ids[4] || all[2].ID != ids[2] {
		t.Errorf("after pruning to 3 runs: %+v", all)
	}

	// By size: each run is over 1 KB and under 1.5 KB; 3000 bytes keep two.
	s = Store{Dir: t.TempDir(), MaxRuns: 100, MaxBytes: 3000}
	ids = nil
	for i := range 4 {
		ids = append(ids, writeRun(t, s, i, "/a", fmt.Sprint("run ", i), "completed", 1000))
	}
	s.Prune()
	all, _ = s.List()
	if len(all) != 2 || all[0].ID != ids[3] || all[1].ID != ids[2] {
		t.Errorf("after pruning to 3000 bytes: %+v", all)
	}

	// The newest run stays even when it alone is over the size.
	s.MaxBytes = 10
	s.Prune()
	if all, _ = s.List(); len(all) != 1 || all[0].ID != ids[3] {
		t.Errorf("after pruning to 10 bytes: %+v", all)
	}
}

// Without sizes, pruning counts the runs by their names and stats none;
// PruneAfter, under 10×pruneEvery runs, counts after every run and sums
// the sizes after a run larger than its share.
func TestPruneAfterCountsAlwaysAndSizesWhenLarge(t *testing.T) {
	t.Parallel()
	s := Store{Dir: t.TempDir(), MaxRuns: 3, MaxBytes: 3000}
	var ids []string
	for i := range 5 {
		ids = append(ids, writeRun(t, s, i, "/a", fmt.Sprint("run ", i), "completed", 1000))
	}
	// By count alone: three stay, though together they pass 3000 bytes.
	if err := s.prune(false); err != nil {
		t.Fatal(err)
	}
	all, _ := s.List()
	if len(all) != 3 || all[0].ID != ids[4] || all[2].ID != ids[2] {
		t.Fatalf("after pruning by count: %+v", all)
	}
	// A run over its share (3000/3 bytes) makes PruneAfter sum the sizes.
	if err := s.PruneAfter(1500); err != nil {
		t.Fatal(err)
	}
	if all, _ = s.List(); len(all) != 2 || all[0].ID != ids[4] || all[1].ID != ids[3] {
		t.Errorf("after a large run: %+v", all)
	}
}

func TestMigrateMovesTheOldLastRun(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	getenv := func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] }
	s, _ := Open(getenv)
	old := filepath.Join(state, "ask", "last.jsonl")
	os.MkdirAll(filepath.Dir(old), 0o700)
	start, _ := json.Marshal(records.Event{Type: records.TypeRunStarted, Settings: &records.Settings{Prompt: "old", Workdir: "/w"}})
	os.WriteFile(old, append(start, '\n'), 0o600)
	s.Migrate(getenv)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("last.jsonl is still there: %v", err)
	}
	if e, ok, err := s.Last("/w"); !ok || err != nil || e.Prompt != "old" || e.Status != "" && e.Status != "unfinished" {
		t.Errorf("Last(/w) = %+v, %v, %v", e, ok, err)
	}
	s.Migrate(getenv) // nothing to move: no error, no change
}

func TestNewIDSortsByTime(t *testing.T) {
	t.Parallel()
	a := NewID(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	b := NewID(time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC))
	if !IsID(a) || !IsID(b) || a >= b || a == NewID(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("ids %s, %s", a, b)
	}
}

// Past 10×pruneEvery runs, a small run need not prune, but a run larger
// than its share always does, by count and by size.
func TestPruneAfterALargeRunWithManyKept(t *testing.T) {
	t.Parallel()
	s := Store{Dir: t.TempDir(), MaxRuns: 10 * pruneEvery, MaxBytes: 1 << 30}
	for i := range s.MaxRuns + 5 {
		writeRun(t, s, i, "/a", fmt.Sprint("run ", i), "completed", 0)
	}
	if err := s.PruneAfter(s.MaxBytes/int64(s.MaxRuns) + 1); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.ids(); len(ids) != s.MaxRuns {
		t.Errorf("%d runs kept after a large run, want %d", len(ids), s.MaxRuns)
	}
}

// BenchmarkPrune is the prune about one run in pruneEvery makes, over a
// full store (DefaultMaxRuns runs of a few kilobytes) with nothing to
// remove: the directory read, the ids told from other names, a size a run.
func BenchmarkPrune(b *testing.B) {
	s := Store{Dir: b.TempDir(), MaxRuns: DefaultMaxRuns, MaxBytes: DefaultMaxBytes}
	for i := range DefaultMaxRuns {
		writeRun(b, s, i, "/w", "prompt", "completed", 4000)
	}
	for b.Loop() {
		if err := s.Prune(); err != nil {
			b.Fatal(err)
		}
	}
}

// idOracle is the form of a run id as a regular expression, which IsID
// spells out byte by byte.
var idOracle = regexp.MustCompile(`^\d{8}-\d{6}\.\d{6}-[0-9a-f]{4}$`)

func TestIsID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"20261123-100000.000000-1a2b", true},
		{NewID(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)), true},
		{"20261123-100000.000000-1A2B", false}, // upper-case hex
		{"20261123-100000.000000-1a2g", false},
		{"20261123-100000.000000-1a2", false},
		{"20261123-100000.000000-1a2b0", false},
		{"20261123_100000.000000-1a2b", false},
		{"20261123-100000,000000-1a2b", false},
		{"2026112a-100000.000000-1a2b", false},
		{".last-1234.jsonl", false},
		{"", false},
	} {
		if got := IsID(tt.s); got != tt.want {
			t.Errorf("IsID(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// FuzzIsID holds IsID to the regular expression of a run id.
func FuzzIsID(f *testing.F) {
	f.Add("20261123-100000.000000-1a2b")
	f.Add("20261123-100000.000000-1a2B")
	f.Add("99999999-999999.999999-ffff")
	f.Add("0000000--000000.000000-0000")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsID(s), idOracle.MatchString(s); got != want {
			t.Errorf("IsID(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
