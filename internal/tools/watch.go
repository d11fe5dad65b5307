package tools

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The change watcher finds what a call changed in the working directory
// when the tool does not say it itself (the shell, user tools, MCP tools).
// It keeps a picture of the tree, taken once: every path's name and type,
// read from the directories alone (a file's own stamp is taken only once
// a call touches it, since stating every file of a large tree costs
// several times what listing it does); from then on the kernel (inotify)
// says which paths were touched, so that a call costs what it touched
// rather than what the tree holds. Where the kernel cannot tell, the tree
// is stamped whole and scanned before and after each call instead,
// whatever its size, and OnWatchProblem hears of it once.

// stamp is what tells that a path changed: for a file its size, times
// (ctime too, which no command can set back, so that a same-size edit with
// the mtime restored shows), inode (a file replaced by another), mode and,
// for a symbolic link, where it points; for a directory only its mode,
// since its times change with every entry made or removed in it.
type stamp struct {
	size         int64
	mtime, ctime int64
	ino          uint64
	mode         fs.FileMode
	target       string
	// partial: only the file's type is known, from its directory's
	// listing (the picture); whether it changed is judged by judge.
	partial bool
}

func (s stamp) isDir() bool { return s.mode.IsDir() }

func stampOf(abs string, info fs.FileInfo) stamp {
	if info.IsDir() {
		return stamp{mode: info.Mode()}
	}
	st := stamp{size: info.Size(), mtime: info.ModTime().UnixNano(), mode: info.Mode()}
	st.ctime, st.ino = statTimes(info)
	if info.Mode()&fs.ModeSymlink != 0 {
		st.target, _ = os.Readlink(abs)
	}
	return st
}

// action is what became of a path between two stamps ("" for nothing to
// report). Directories are pictured for their modes only: a directory made
// or removed shows through the files in it.
func action(old stamp, had bool, cur stamp, exists bool) string {
	wasFile, isFile := had && !old.isDir(), exists && !cur.isDir()
	switch {
	case wasFile && isFile:
		if old != cur {
			return "changed"
		}
	case isFile:
		return "created"
	case wasFile:
		return "deleted"
	case had && exists && old.mode != cur.mode:
		return "changed"
	}
	return ""
}

// judge is what became of a path between the picture or the last stamp
// (old) and now (cur). A file the picture knows only by name changed if
// the kernel said it was written, its attributes changed, or it was made,
// removed or moved (sure); else, when it was only closed after being
// opened for writing or the kernel lost track, if its ctime is the call's
// or later (since).
func (w *watcher) judge(old stamp, had bool, cur stamp, exists, sure bool) string {
	if had && old.partial && exists && !cur.isDir() {
		if sure || cur.ctime >= w.since {
			return "changed"
		}
		return ""
	}
	return action(old, had, cur, exists)
}

// kernelWatch is the kernel's side: which paths were touched.
type kernelWatch interface {
	// addDir watches a directory, before it is read; an error means the
	// kernel cannot watch (more).
	addDir(abs, rel string) error
	// start follows the kernel's reports from now on.
	start()
	// take returns, and forgets, the paths touched since it was last
	// called, each true when the kernel saw it changed rather than only
	// closed after writing, and the directories removed or moved away
	// (their whole trees touched); lost when the kernel lost track (scan
	// then); err when it can no longer watch. Called with the watcher's
	// lock held.
	take() (touched map[string]bool, gone []string, lost bool, err error)
	// forget hears what the kernel has said so far and forgets that rel
	// was touched. Called with the watcher's lock held.
	forget(rel string)
	// close stops it; called without the watcher's lock.
	close()
}

type watcher struct {
	root  *Root
	ready chan struct{} // closed once the first picture is taken

	mu     sync.Mutex
	files  map[string]stamp // the picture: every path under the root but ask's hidden ones
	kernel kernelWatch      // nil: scan the tree instead
	// since is the file system's clock as the watched calls running
	// began (fsNow), for judge.
	since int64
	// dirs are the picture's directories and their times, until the
	// first watched call asks the kernel to watch them (armed).
	dirs  map[string]int64
	armed bool
	// hurry is set when a watched call waits for the picture: the kernel
	// is asked to watch the directories read so far, and each of the rest
	// before it is read (prewatched), so that arm need not go over them
	// again.
	hurry      atomic.Bool
	hurried    bool
	prewatched map[string]bool
	// pending are the paths file tools changed while the picture was
	// being taken, stamped again at arm.
	pendingMu sync.Mutex
	pending   []string
	open      int // watched calls running
	noticed   bool
	stopped   atomic.Bool // StopWatching was called: the picture need not be finished
}

// pictureGrace is how long a request is out before StartWatching takes
// the picture. A model that answers sooner is a local fake or a cache: the
// picture would only compete with the answer for the CPU (in a directory
// of a thousand files, 0.3 ms of a one-shot answer's 5 on two cores), and
// a call that comes that soon takes the picture itself. A model that keeps
// the run waiting longer hides it.
const pictureGrace = 5 * time.Millisecond

// StartWatching takes the picture the watcher starts from, in the
// background, so that the first watched call does not wait for it (a run
// calls it as its first request goes out); the picture starts after
// pictureGrace, unless a call asks for it first. The kernel is asked to
// watch only by the first watched call, so that a run that calls no
// command never pays for an inotify instance at its exit. Without it, the
// first watched call takes the picture.
func (r *Root) StartWatching() {
	if r == nil || r.onChange == nil {
		return
	}
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	if r.watch != nil || r.pictureSoon != nil {
		return
	}
	var soon *time.Timer
	grace := cmp.Or(r.pictureGrace, pictureGrace)
	soon = time.AfterFunc(grace, func() {
		r.watchMu.Lock()
		defer r.watchMu.Unlock()
		if r.pictureSoon == soon { // not stopped, nor taken by a call
			r.watcherLocked()
		}
	})
	r.pictureSoon = soon
}

// ReadyWatching asks the kernel to watch, in the background, for a
// watched call about to come (the model asked for it, and it waits for a
// person's approval or its hooks): the call then finds it ready.
func (r *Root) ReadyWatching() {
	if r == nil || r.onChange == nil {
		return
	}
	w := r.watcher()
	w.hurry.Store(true)
	go func() {
		<-w.ready
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.armed && !w.stopped.Load() {
			w.arm()
		}
	}()
}

// StopWatching releases what watching holds in the kernel; a later
// watched call starts again from a new picture. A call still running keeps
// the old watcher, scanning. The release goes on after it returns: closing
// an inotify instance waits for the kernel to free its marks (a grace
// period of its SRCU, 4–15 ms measured), which the run's answer and
// transcript need not wait for; a process that exits still does.
func (r *Root) StopWatching() {
	if r == nil {
		return
	}
	r.watchMu.Lock()
	r.stopPictureSoon()
	w := r.watch
	r.watch = nil
	r.watchMu.Unlock()
	if w == nil {
		return
	}
	w.stopped.Store(true)
	<-w.ready
	w.mu.Lock()
	kw := w.kernel
	w.kernel = nil
	w.mu.Unlock()
	if kw != nil {
		go kw.close()
	}
}

func (r *Root) watcher() *watcher {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	return r.watcherLocked()
}

// watcherLocked is watcher with watchMu held.
func (r *Root) watcherLocked() *watcher {
	r.stopPictureSoon()
	if r.watch == nil {
		r.watch = &watcher{root: r, ready: make(chan struct{})}
		go r.watch.start()
	}
	return r.watch
}

// stopPictureSoon drops StartWatching's timer; called with watchMu held.
func (r *Root) stopPictureSoon() {
	if r.pictureSoon != nil {
		r.pictureSoon.Stop()
		r.pictureSoon = nil
	}
}

func (w *watcher) start() {
	defer close(w.ready)
	w.mu.Lock()
	defer w.mu.Unlock()
	files, dirs := map[string]stamp{}, map[string]int64{}
	w.files, w.dirs = files, dirs
	info, err := os.Lstat(w.root.dir)
	if err != nil {
		return
	}
	// Stopped (err), the picture is left unfinished: only a call already
	// waiting for it uses it, and that run is ending.
	_ = w.listDir(w.root.dir, "", dirTime(info))
}

// watchSoFar asks the kernel to watch the directories the picture has
// read so far, for a call waiting for the rest; a kernel that cannot is
// left to arm, which tries again and scans if it must. Called with the
// lock held.
func (w *watcher) watchSoFar() {
	w.hurried = true
	kw, err := w.newKernel()
	if err != nil {
		return
	}
	if err := w.addDirs(kw, slices.Collect(maps.Keys(w.dirs))); err != nil {
		go kw.close() // never started
		return
	}
	w.kernel, w.prewatched = kw, map[string]bool{}
}

func (w *watcher) newKernel() (kernelWatch, error) {
	if w.root.watchKernel != nil {
		return w.root.watchKernel(w.root, &w.mu)
	}
	return newKernelWatch(w.root, &w.mu)
}

// listDir puts the tree under the directory abs (rel in the root) into
// the picture: each file by its name and type alone, as the directory's
// listing gives them, each directory by its mode (files) and its time (at,
// into dirs), taken before it is read: a change made after shows in it,
// when the kernel is asked to watch (arm).
func (w *watcher) listDir(abs, rel string, at int64) error {
	if w.stopped.Load() {
		return errStopped
	}
	if w.root.pictureDir != nil {
		w.root.pictureDir(rel)
	}
	if !w.hurried && w.hurry.Load() {
		w.watchSoFar()
	}
	w.dirs[rel] = at
	if w.kernel != nil {
		if err := w.kernel.addDir(abs, rel); err != nil {
			go w.kernel.close() // never started; arm tries again
			w.kernel, w.prewatched = nil, nil
		} else {
			w.prewatched[rel] = true
		}
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil // gone, or unreadable: nothing to see in it
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil && len(ents) == 0 {
		return nil
	}
	// Most directories hold nothing hidden or special: their entries
	// need no look each.
	check := w.root.hidesWithin(abs) || abs == "/"
	for _, e := range ents {
		childRel := joinRel(rel, e.Name())
		if check && (w.root.isHidden(abs+"/"+e.Name()) || isSpecial(abs+"/"+e.Name())) {
			continue
		}
		if !e.IsDir() {
			w.files[childRel] = stamp{mode: e.Type(), partial: true}
			continue
		}
		childAbs := abs + "/" + e.Name()
		info, err := os.Lstat(childAbs)
		if err != nil || !info.IsDir() {
			continue // gone, or replaced: the kernel or arm sees to it
		}
		w.files[childRel] = stampOf(childAbs, info)
		if err := w.listDir(childAbs, childRel, dirTime(info)); err != nil {
			return err
		}
	}
	return nil
}

// arm asks the kernel to watch every directory of the picture, at the
// first watched call. A directory whose time moved since the picture was
// taken is read again, its new directories watched, so that nothing made
// meanwhile goes unheard. Where the kernel cannot watch, the watcher
// scans instead, from the picture it has. Called with the lock held.
func (w *watcher) arm() {
	w.armed = true
	kw, err, pre := w.kernel, error(nil), w.kernel != nil
	if !pre {
		kw, err = w.newKernel()
	}
	if err == nil {
		err = w.watchPicture(kw, pre)
		if err == nil {
			kw.start()
			w.kernel = kw
		} else {
			go kw.close() // it waits for nothing: never started
		}
	}
	if err != nil {
		w.problem(err)
		// Scanning compares stamps, which the picture's files lack:
		// they are taken now, before the call.
		full := map[string]stamp{}
		_ = w.root.scanDir(w.root.dir, "", full, nil)
		w.files = full
	}
	w.dirs, w.prewatched = nil, nil
	w.pendingMu.Lock()
	pending := w.pending
	w.pending = nil
	w.pendingMu.Unlock()
	for _, rel := range pending {
		if cur, exists := w.stat(rel); exists {
			w.files[rel] = cur
		} else {
			delete(w.files, rel)
		}
	}
}

// watchPicture adds the picture's directories to kw, parents first,
// unless the picture did (pre), then reads again the ones that changed
// since they were read without the kernel watching.
func (w *watcher) watchPicture(kw kernelWatch, pre bool) error {
	rels := slices.Sorted(maps.Keys(w.dirs))
	if !pre {
		if err := w.addDirs(kw, rels); err != nil {
			return err
		}
	}
	// The first call waits for this: the directories are looked at on
	// two threads, and only those that changed are read again.
	moved := make([]bool, len(rels))
	inTwo(len(rels), func(i int) {
		if w.prewatched[rels[i]] {
			return
		}
		info, err := os.Lstat(w.abs(rels[i]))
		moved[i] = err != nil || !info.IsDir() || dirTime(info) != w.dirs[rels[i]]
	})
	for i, rel := range rels {
		if !moved[i] {
			continue
		}
		abs := w.abs(rel)
		info, err := os.Lstat(abs)
		for p := range w.files {
			if parentRel(p) == rel || rel == "" && !strings.Contains(p, "/") {
				delete(w.files, p)
			}
		}
		if err == nil && info.IsDir() {
			if err := w.root.scanDir(abs, rel, w.files, kw.addDir); err != nil {
				return err
			}
		}
	}
	return nil
}

// addDirs adds the directories rels to kw, on two threads where the
// kernel's watch can take them so (its cost is mostly the kernel's
// looking up each path).
func (w *watcher) addDirs(kw kernelWatch, rels []string) error {
	abs := make([]string, len(rels))
	for i, rel := range rels {
		abs[i] = w.abs(rel)
	}
	if bw, ok := kw.(batchWatch); ok {
		return bw.addDirs(abs, rels)
	}
	for i, rel := range rels {
		if err := kw.addDir(abs[i], rel); err != nil {
			return err
		}
	}
	return nil
}

// batchWatch is a kernel watch that adds many directories at once.
type batchWatch interface {
	addDirs(abs, rels []string) error
}

// inTwo calls f for each of 0..n-1, on two goroutines.
func inTwo(n int, f func(i int)) {
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 2 {
				f(i)
			}
		}()
	}
	wg.Wait()
}

func (w *watcher) abs(rel string) string {
	if rel == "" {
		return w.root.dir
	}
	return w.root.dir + "/" + rel
}

// dirTime is what moves when a directory gains or loses an entry.
func dirTime(info fs.FileInfo) int64 {
	ctime, _ := statTimes(info)
	return max(info.ModTime().UnixNano(), ctime)
}

// errStopped ends the picture of a watcher stopped meanwhile.
var errStopped = errors.New("the watcher was stopped")

// problem says once that the kernel cannot watch.
func (w *watcher) problem(err error) {
	if w.noticed || w.root.onWatchProblem == nil {
		return
	}
	w.noticed = true
	w.root.onWatchProblem(fmt.Sprintf("the change watcher cannot use the kernel (%v): it scans the working directory before and after each command instead, which takes longer in a large tree", err))
}

// Watch starts watching a call of tool, which may change files; the
// function it returns, called once the call has ended, reports what changed
// in the meantime, each file once. Calls running at once share the watch:
// what changed is reported by the first to end. With nobody listening
// (OnChange), nothing is watched. A call that comes before the picture is
// finished waits for the rest of it (its names only, the kernel watching
// each directory as it is read): a file the call removes can be reported
// only if its name was read before the call began.
func (r *Root) Watch(tool string) (done func()) {
	if r == nil || r.onChange == nil {
		return func() {}
	}
	w := r.watcher()
	select {
	case <-w.ready:
	default:
		w.hurry.Store(true)
		<-w.ready
	}
	w.mu.Lock()
	if !w.armed {
		w.arm()
	}
	if w.open == 0 {
		w.since = fsNow(w.root.dir)
		w.settle("") // what changed between calls is no call's doing
	}
	w.open++
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.open--
		changes := w.settle(tool)
		w.mu.Unlock()
		for _, c := range changes {
			r.changed(c)
		}
	}
}

// absorb takes a change a file tool reported into the picture, so that
// the watcher does not report it again.
func (w *watcher) absorb(rel string) {
	select {
	case <-w.ready:
	default:
		// The picture being taken may have read it already: it is
		// stamped again when the kernel is asked to watch.
		w.pendingMu.Lock()
		w.pending = append(w.pending, rel)
		w.pendingMu.Unlock()
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kernel != nil {
		w.kernel.forget(rel)
	}
	if cur, exists := w.stat(rel); exists {
		w.files[rel] = cur
	} else {
		delete(w.files, rel)
	}
}

// settle brings the picture up to date and returns what changed, as
// changes of tool ("" forgets them).
func (w *watcher) settle(tool string) []Change {
	var out []Change
	report := func(p, act string) {
		if act != "" && tool != "" {
			out = append(out, Change{Path: p, Action: act, Tool: tool})
		}
	}
	if w.kernel != nil {
		touched, gone, lost, err := w.kernel.take()
		if err != nil {
			w.problem(err)
			go w.kernel.close() // it needs the lock this holds
			w.kernel, lost = nil, true
		}
		if !lost {
			w.update(touched, gone, report)
			return sorted(out)
		}
	}
	cur := map[string]stamp{}
	var add func(abs, rel string) error
	if w.kernel != nil {
		add = w.kernel.addDir
	}
	if err := w.root.scanDir(w.root.dir, "", cur, add); err != nil && w.kernel != nil {
		w.problem(err)
		go w.kernel.close()
		w.kernel = nil
	}
	for p, st := range cur {
		old, had := w.files[p]
		report(p, w.judge(old, had, st, true, false))
	}
	for p, old := range w.files {
		if _, still := cur[p]; !still {
			report(p, action(old, true, stamp{}, false))
		}
	}
	w.files = cur
	return sorted(out)
}

// update stamps the touched paths again, parents first, so that a path
// under what is now a symbolic link or a file is known to be gone; each
// is true when the kernel saw it changed.
func (w *watcher) update(touched map[string]bool, gone []string, report func(p, act string)) {
	if len(gone) > 0 {
		goneSet := make(map[string]bool, len(gone))
		for _, g := range gone {
			goneSet[g] = true
		}
		for p := range w.files {
			for d := parentRel(p); d != ""; d = parentRel(d) {
				if goneSet[d] {
					touched[p] = true
					break
				}
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(touched)) {
		old, had := w.files[p]
		cur, exists := w.stat(p)
		report(p, w.judge(old, had, cur, exists, touched[p]))
		if exists {
			w.files[p] = cur
		} else {
			delete(w.files, p)
		}
	}
}

// stat stamps one path of the tree; a path that is hidden, or whose
// directory is no longer one in the picture, does not exist.
func (w *watcher) stat(rel string) (stamp, bool) {
	abs := w.root.dir + "/" + rel
	if w.root.isHidden(abs) {
		return stamp{}, false
	}
	if d := parentRel(rel); d != "" {
		if st, ok := w.files[d]; !ok || !st.isDir() {
			return stamp{}, false
		}
	}
	info, err := os.Lstat(abs)
	if err != nil {
		return stamp{}, false
	}
	return stampOf(abs, info), true
}

func parentRel(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func sorted(cs []Change) []Change {
	slices.SortFunc(cs, func(a, b Change) int { return cmp.Compare(a.Path, b.Path) })
	return cs
}

// scanDir stamps every path under the directory abs (rel in the root)
// into files, skipping ask's hidden paths and the kernel's own trees.
// When add is set, it is called on each directory before the directory is
// read, so that nothing made after the read goes unheard; its error stops
// the scan.
func (r *Root) scanDir(abs, rel string, files map[string]stamp, add func(abs, rel string) error) error {
	if add != nil {
		if err := add(abs, rel); err != nil {
			return err
		}
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil // gone, or unreadable: nothing to see in it
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil && len(ents) == 0 {
		return nil
	}
	for _, e := range ents {
		childAbs, childRel := abs+"/"+e.Name(), joinRel(rel, e.Name())
		if r.isHidden(childAbs) || isSpecial(childAbs) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		files[childRel] = stampOf(childAbs, info)
		if info.IsDir() {
			if err := r.scanDir(childAbs, childRel, files, add); err != nil {
				return err
			}
		}
	}
	return nil
}

func isSpecial(abs string) bool {
	for _, t := range specialTrees {
		if abs == t {
			return true
		}
	}
	return false
}
