package tools

import (
	"bytes"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"time"
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
	if r.onChange != nil {
		r.onChange(c)
	}
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

// maxWatched bounds the files a command's changes are looked for in: a
// larger working directory is not walked twice per command.
const maxWatched = 20000

// stamp is what tells a file changed: size and modification time.
type stamp struct {
	size int64
	mod  time.Time
}

// snapshot stamps the regular files of the working directory, outside
// version control's own directories and ask's hidden files; nil when
// nobody listens or there are more than maxWatched.
func (r *Root) snapshot() map[string]stamp {
	if r.onChange == nil {
		return nil
	}
	files := map[string]stamp{}
	err := filepath.WalkDir(r.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != r.dir && (controlDirs[d.Name()] || r.isHidden(p)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || r.isHidden(p) {
			return nil
		}
		if len(files) >= maxWatched {
			return fs.SkipAll
		}
		if info, err := d.Info(); err == nil {
			files[r.rel(p)] = stamp{info.Size(), info.ModTime()}
		}
		return nil
	})
	if err != nil || len(files) >= maxWatched {
		return nil
	}
	return files
}

// reportChanges tells of the differences between two snapshots, made
// before and after a command ran.
func (r *Root) reportChanges(tool string, before, after map[string]stamp) {
	if before == nil || after == nil {
		return
	}
	for _, p := range slices.Sorted(maps.Keys(after)) {
		was, existed := before[p]
		switch {
		case !existed:
			r.changed(Change{Path: p, Action: "created", Tool: tool})
		case was != after[p]:
			r.changed(Change{Path: p, Action: "changed", Tool: tool})
		}
	}
	for _, p := range slices.Sorted(maps.Keys(before)) {
		if _, still := after[p]; !still {
			r.changed(Change{Path: p, Action: "deleted", Tool: tool})
		}
	}
}
