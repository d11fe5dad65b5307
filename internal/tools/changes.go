package tools

import (
	"bytes"
)

// Change is a file a tool created, edited, overwrote or deleted.
type Change struct {
	Path   string // relative to the working directory
	Action string // created, edited, overwrote, deleted, changed
	// Added and Removed count lines when Counted; a command's changes are
	// seen only from outside, without their lines.
	Added, Removed int
	Counted        bool
	Tool           string
}

// OnChange makes fn hear of every file a tool changes in the working
// directory. Set it before any tool runs; fn may be called from several
// tools at once.
func (r *Root) OnChange(fn func(Change)) { r.onChange = fn }

func (r *Root) changed(c Change) {
	if c.Counted {
		// A file tool says what it changed, with its lines: the watcher
		// must not say it again for a command running at the same time.
		r.watchMu.Lock()
		w := r.watch
		r.watchMu.Unlock()
		if w != nil {
			w.absorb(c.Path)
		}
	}
	if r.onChange != nil {
		r.onChange(c)
	}
}

// OnWatchProblem makes fn hear, once, that the working directory cannot
// be watched by the kernel (no inotify here, or its limit reached), so
// that changes are found by scanning the tree instead, at a cost that
// grows with it.
func (r *Root) OnWatchProblem(fn func(string)) { r.onWatchProblem = fn }

// ReportsOwnChanges reports whether a tool is one of ask's own that
// changes no file (the readers) or says itself what it changed (the file
// tools): every other tool's calls are watched (Watch).
func ReportsOwnChanges(name string) bool {
	switch name {
	case "read_file", "list_directory", "search", "edit_file", "write_file":
		return true
	}
	return false
}

// lineDelta counts the lines that a change from old to new adds and
// removes, each line matched at most once (the +N -M a diffstat shows,
// without aligning the lines).
func lineDelta(old, new []byte) (added, removed int) {
	count := map[string]int{}
	for _, l := range splitLines(old) {
		count[string(l)]++
	}
	for _, l := range splitLines(new) {
		if count[string(l)] > 0 {
			count[string(l)]--
			continue
		}
		added++
	}
	for _, n := range count {
		removed += n
	}
	return added, removed
}

func splitLines(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}
