package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"

	"github.com/ask-cli/ask/internal/noblock"
)

// MaxRecordedContent bounds the content of a file a change carries, before
// and after (DESIGN §6: up to 1 MB), so that a transcript stays readable.
const MaxRecordedContent = 1 << 20

// Change is a file a tool created, edited, overwrote or deleted.
type Change struct {
	Path   string // relative to the working directory
	Action string // created, edited, overwrote, deleted, changed
	// Added and Removed count lines when Counted; a command's changes are
	// seen only from outside, without their lines.
	Added, Removed int
	Counted        bool
	Tool           string
	// Before is the file's content before the change, when a file tool
	// changed a file of at most MaxRecordedContent bytes (HasBefore).
	Before    []byte
	HasBefore bool
	// After is the content the change left, up to MaxRecordedContent
	// bytes (HasAfter), and AfterSHA256 its SHA-256 in hex whatever its
	// size: how undo knows the file is still as the run left it. Both are
	// empty for a file deleted.
	After       []byte
	HasAfter    bool
	AfterSHA256 string
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
		if c.Action != "deleted" && c.AfterSHA256 == "" {
			r.readAfter(&c)
		}
		r.onChange(c)
	}
}

// readAfter fills in what a command left in a file it changed: its hash,
// and its content when small enough. A file that is no longer a regular
// file (a symbolic link, a FIFO) is left without them.
func (r *Root) readAfter(c *Change) {
	osRoot, err := r.openRoot()
	if err != nil {
		return
	}
	defer osRoot.Close()
	f, info, err := noblock.OpenIn(osRoot, c.Path)
	if err != nil {
		return
	}
	defer f.Close()
	if !info.Mode().IsRegular() {
		return
	}
	h := sha256.New()
	var head bytes.Buffer
	if _, err := io.Copy(io.MultiWriter(h, &limitedBuffer{&head, MaxRecordedContent + 1}), f); err != nil {
		return
	}
	c.AfterSHA256 = hex.EncodeToString(h.Sum(nil))
	if head.Len() <= MaxRecordedContent {
		c.After, c.HasAfter = head.Bytes(), true
	}
}

// limitedBuffer keeps the first n bytes written to it and takes the rest
// without keeping it.
type limitedBuffer struct {
	buf *bytes.Buffer
	n   int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// contentChange fills in a file tool's change with the content before
// (nil when the file was new) and after, and the hash of after.
func contentChange(c Change, before []byte, existed bool, after []byte) Change {
	if existed && len(before) <= MaxRecordedContent {
		c.Before, c.HasBefore = before, true
	}
	if len(after) <= MaxRecordedContent {
		c.After, c.HasAfter = after, true
	}
	sum := sha256.Sum256(after)
	c.AfterSHA256 = hex.EncodeToString(sum[:])
	return c
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

// ChangesNothing reports whether a tool is one of ask's readers, which
// change no file and run nothing.
func ChangesNothing(name string) bool {
	switch name {
	case "read_file", "list_directory", "search":
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
