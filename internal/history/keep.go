package history

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	mathrand "math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// Keep starts keeping the run id (NewID), after moving the transcript
// older versions kept into the store; a nil store, or one without a
// directory, keeps nothing (a nil Recording).
func (s *Store) Keep(getenv func(string) string, id string) (*Recording, error) {
	if s == nil || s.Dir == "" {
		return nil, nil
	}
	s.Migrate(getenv)
	return openRecording(s.Path(id))
}

// KeepAgain goes on keeping the run id, which stopped pending (ask batch
// --no-wait) and is carried on: the copy starts with its transcript so far,
// and replaces the kept file when the run ends, so that the run stays one
// file under its id.
func (s *Store) KeepAgain(id string, transcript []byte) (*Recording, error) {
	if s == nil || s.Dir == "" {
		return nil, nil
	}
	if !IsID(id) {
		return nil, fmt.Errorf("%q is not a run id", id)
	}
	l := &Recording{path: s.Path(id), replace: true}
	l.Write(transcript)
	return l, nil
}

// Recording keeps a run's transcript for the history. Most runs are small,
// so the copy is held in memory and written out in one go when the run
// ends, to a new file that no other run can have: no temporary file, no
// rename and no write a step. The file is opened without a name while the
// run waits for the model, and named when it ends (OpenUnnamed);
// where it cannot be, it is created by name then. A run that outgrows
// memoryCopyLimit goes on in that unnamed file, or else in a private
// temporary file beside the kept runs, renamed into place when it ends.
// Either way runs in parallel never mix their lines, and a run is listed
// only once whole.
type Recording struct {
	path    string
	pending []byte // the copy, while it is held in memory
	// early brings the unnamed file opened for the copy, or nil; it is
	// taken once (takeEarly).
	early   <-chan *os.File
	f       *os.File // the copy, once it outgrew memory
	unnamed bool     // f is the unnamed file, which nothing can reach by a name
	err     error    // the first failed write
	// written hashes every byte written to a named f, to know the file is
	// still ours when the run ends.
	written hash.Hash
	size    int64
	// replace: the run was kept before (KeepAgain), and Commit puts the
	// whole copy in its place.
	replace bool
}

// memoryCopyLimit is how much of a run's transcript Recording holds in
// memory; a one-shot answer writes a few kilobytes.
const memoryCopyLimit = 1 << 20

// openRecording starts the copy, or returns nil when path is "": a missing
// copy must not stop the run it records.
func openRecording(path string) (*Recording, error) {
	if path == "" {
		return nil, nil
	}
	// Both are done while the run waits for the model. The copies of
	// killed runs are rare, and only an hour old one is taken for such;
	// looking for them costs a read of a directory that holds every kept
	// run, so about one run in staleCheckEvery looks.
	dir := filepath.Dir(path)
	lookForStale := mathrand.N(staleCheckEvery) == 0
	early := make(chan *os.File, 1)
	go func() {
		if lookForStale {
			removeStaleCopies(dir, time.Now())
		}
		early <- OpenUnnamed(dir)
	}()
	return &Recording{path: path, early: early}, nil
}

// takeEarly waits for the unnamed file opened for the copy; nil when there
// is none or it was taken.
func (l *Recording) takeEarly() *os.File {
	if l.early == nil {
		return nil
	}
	f := <-l.early
	l.early = nil
	return f
}

// lastTempPattern names the private copies of large runs under way.
const lastTempPattern = ".last-*.jsonl"

// staleCheckEvery is how often, on average, a run removes stale copies.
const staleCheckEvery = 16

// staleAfter is how long a copy may go unwritten before it is taken for
// the leftover of a run that was killed (SIGKILL, a second Ctrl-C, a
// crash). A run under way writes at least every step, and --timeout
// defaults to minutes.
const staleAfter = time.Hour

// removeStaleCopies deletes the copies in dir that no run has written for
// staleAfter, so that killed runs do not pile them up; the copies of runs
// still going are newer and stay. It is best effort: a copy it cannot
// remove stops nothing.
func removeStaleCopies(dir string, now time.Time) {
	names, err := filepath.Glob(filepath.Join(dir, lastTempPattern))
	if err != nil {
		return
	}
	for _, name := range names {
		if info, err := os.Lstat(name); err == nil && info.Mode().IsRegular() && now.Sub(info.ModTime()) > staleAfter {
			os.Remove(name)
		}
	}
}

// Writer is the recorder's sink, nil when there is no copy.
func (l *Recording) Writer() io.Writer {
	if l == nil {
		return nil
	}
	return l
}

// Write never fails, so that the recorder does not take a failing copy for
// a failing transcript; Commit reports the error and keeps no copy.
func (l *Recording) Write(p []byte) (int, error) {
	if l.err != nil {
		return len(p), nil
	}
	l.size += int64(len(p))
	if l.f == nil && l.size <= memoryCopyLimit {
		l.pending = append(l.pending, p...)
		return len(p), nil
	}
	if l.f == nil {
		if l.err = l.spill(); l.err != nil {
			return len(p), nil
		}
	}
	n, err := l.f.Write(p)
	if l.written != nil {
		l.written.Write(p[:n])
	}
	l.err = err
	return len(p), nil
}

// spill moves the copy held in memory to a file: the unnamed one opened
// for it, or else a private temporary file.
func (l *Recording) spill() error {
	if f := l.takeEarly(); f != nil {
		l.f, l.unnamed = f, true
		_, err := f.Write(l.pending)
		l.pending = nil
		return err
	}
	dir := filepath.Dir(l.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, lastTempPattern)
	if err != nil {
		return err
	}
	l.f, l.written = f, sha256.New()
	_, err = f.Write(l.pending)
	l.written.Write(l.pending)
	l.pending = nil
	return err
}

// Commit writes the copy to its place in the history. A copy held in
// memory becomes a new file there, and the unnamed file is named. One in a
// temporary file is renamed into place if it is still the file this run
// wrote, byte for byte: it waited in a directory that other processes can
// write to, and whatever --continue reads is taken as ask's own record.
func (l *Recording) Commit() error {
	if l == nil {
		return nil
	}
	if l.f == nil {
		if l.err != nil { // a spill that failed
			return l.err
		}
		if l.replace {
			return l.writeReplace()
		}
		if f := l.takeEarly(); f != nil && Link(f, l.pending, l.path) == nil {
			return nil
		}
		// No unnamed file, or naming it failed: the copy is still in
		// memory.
		return l.writeNew()
	}
	if l.unnamed {
		if l.err != nil {
			l.f.Close()
			return l.err
		}
		return Link(l.f, nil, l.path)
	}
	ours, _ := l.f.Stat()
	err := errors.Join(l.err, l.f.Close())
	if err == nil {
		err = l.stillOurs(ours)
	}
	if err == nil {
		err = os.Rename(l.f.Name(), l.path)
	}
	if err != nil {
		os.Remove(l.f.Name())
	}
	return err
}

// writeNew writes the copy held in memory to l.path, which must not exist:
// an id is never kept twice.
func (l *Recording) writeNew() error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(l.pending)
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(l.path)
	}
	return err
}

// writeReplace writes the copy held in memory over l.path, through a
// private temporary file renamed into place.
func (l *Recording) writeReplace() error {
	dir := filepath.Dir(l.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, lastTempPattern)
	if err != nil {
		return err
	}
	_, err = f.Write(l.pending)
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(f.Name(), l.path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// stillOurs checks that the copy's path names the file this run created
// and holds what it wrote.
func (l *Recording) stillOurs(ours os.FileInfo) error {
	changed := fmt.Errorf("%s was changed by another process while the run wrote it; not keeping it", l.f.Name())
	now, err := os.Lstat(l.f.Name())
	if err != nil || ours == nil || !os.SameFile(ours, now) || now.Size() != l.size {
		return changed
	}
	f, err := os.Open(l.f.Name())
	if err != nil {
		return changed
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil || !bytes.Equal(h.Sum(nil), l.written.Sum(nil)) {
		return changed
	}
	return nil
}

// Size is how much the run's transcript has written.
func (l *Recording) Size() int64 {
	if l == nil {
		return 0
	}
	return l.size
}
