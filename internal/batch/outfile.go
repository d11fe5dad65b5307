package batch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ask-cli/ask/internal/termtext"
)

// A result file FILE has two files beside it: FILE.lock, which one ask
// batch at a time holds (flock) and which names its holder, and
// FILE.state, which pins FILE to the task file and the shard it was made
// for. None of the three is ever written through a symbolic link.

// Output is the --output file, open for appending, locked against a
// second batch writing it.
type Output struct {
	File *os.File
	Done *Done
	path string
	lock *os.File
}

// OutputOptions are what a batch brings to its result file.
type OutputOptions struct {
	// Pin is what the file is made for; a file made for another is refused.
	Pin Pin
	// RetryFailed runs again the tasks that did not answer.
	RetryFailed bool
}

// OpenOutput locks the results file at path, checks it is the one for
// opts.Pin, and opens (or creates) it, reading the results it holds. A
// last line without its newline, or that is not a result, is what a crash
// of the machine (not of ask: each line is one write) can leave; it is cut
// off, and its task runs again. Every error is the user's to fix (a usage
// error), but a failing disk's.
func OpenOutput(path string, opts OutputOptions) (_ *Output, err error) {
	if err := checkDirs(path); err != nil {
		return nil, fmt.Errorf("--output %s: %w", path, err)
	}
	o := &Output{path: path}
	defer func() {
		if err != nil {
			o.Close()
		}
	}()
	if o.lock, err = takeLock(path + ".lock"); err != nil {
		return nil, fmt.Errorf("--output %s: %w", path, err)
	}
	removeLeftovers(path)
	if err := checkPin(path, opts.Pin); err != nil {
		return nil, err
	}
	if o.File, err = openNoFollow(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
		return nil, fmt.Errorf("--output %s: %w", path, err)
	}
	done, keep, err := ReadDone(o.File)
	if err == nil {
		var info os.FileInfo
		if info, err = o.File.Stat(); err == nil && keep < info.Size() {
			err = o.File.Truncate(keep)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--output %s: %w", path, err)
	}
	done.RetryFailed = opts.RetryFailed
	o.Done = done
	if done.Duplicates {
		if err := o.Compact(nil); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Sink is the file's sink: one append a line, synced.
func (o *Output) Sink() *Sink { return NewSink(o.File, o.File.Sync) }

// Close releases the file and its lock.
func (o *Output) Close() error {
	var err error
	if o.File != nil {
		err = o.File.Close()
	}
	if o.lock != nil {
		o.lock.Close() // the lock file stays: removing it would race a newcomer
	}
	return err
}

// Compact rewrites the file with one line per task: each id's last, and
// no line without an id whose number is in dropLines (its line was fixed
// and ran). It writes a new file beside the old and renames it over, so a
// kill at any moment leaves the old file or the new one, whole.
func (o *Output) Compact(dropLines map[int]bool) error {
	fail := func(err error) error {
		return fmt.Errorf("--output %s: rewrite it with one line per task: %w", o.path, err)
	}
	last := map[string]int{} // id → its last line
	if err := o.eachLine(func(n int, r Result, _ []byte) error {
		if r.ID != "" && r.Status != StatusPending {
			last[r.ID] = n
		}
		return nil
	}); err != nil {
		return fail(err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(o.path), "."+filepath.Base(o.path)+".*")
	if err != nil {
		return fail(err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	w := bufio.NewWriter(tmp)
	err = o.eachLine(func(n int, r Result, line []byte) error {
		switch {
		case r.ID != "" && r.Status != StatusPending && last[r.ID] != n:
			return nil // an earlier line of a task run again
		case r.ID == "" && dropLines[r.Line]:
			return nil
		}
		_, err := w.Write(line)
		return err
	})
	if info, serr := o.File.Stat(); err == nil && serr == nil {
		err = tmp.Chmod(info.Mode().Perm())
	}
	if err = errors.Join(err, w.Flush(), tmp.Sync(), tmp.Close()); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), o.path); err != nil {
		return fail(err)
	}
	syncDir(filepath.Dir(o.path))
	f, err := openNoFollow(o.path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fail(err)
	}
	o.File.Close()
	o.File = f
	return nil
}

// eachLine reads the file's whole result lines from its start.
func (o *Output) eachLine(fn func(n int, r Result, line []byte) error) error {
	f, err := openNoFollow(o.path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, _, tooLong, err := readRecord(br, nil)
		if err == io.EOF {
			return nil // a torn last line was cut when the file was opened
		}
		if err != nil {
			return err
		}
		var r Result
		if tooLong || json.Unmarshal(line, &r) != nil {
			return fmt.Errorf("line %d is not a result line of ask batch", n)
		}
		if err := fn(n, r, append(line, '\n')); err != nil {
			return err
		}
	}
}

// openNoFollow opens a regular file of one name at path, never through a
// symbolic link: a link a checkout planted (results.jsonl -> ~/.bashrc)
// would otherwise have ask append to, or cut, what it points to.
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: ask batch never writes through one; give the file itself", path)
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	switch {
	case err != nil:
	case !info.Mode().IsRegular():
		err = fmt.Errorf("%s is not a regular file", path)
	default:
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			err = fmt.Errorf("%s has other names (hard links): ask batch never writes into a shared file", path)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkDirs refuses a path whose folders, as the user wrote them, pass
// through a symbolic link: out/results.jsonl with out -> ~ writes into
// the home folder. An absolute path's folders above the working
// directory are the user's own choice and are not checked, but the
// file's own folder always is.
func checkDirs(path string) error {
	dir := filepath.Clean(filepath.Dir(path))
	stop := string(filepath.Separator)
	if filepath.IsAbs(dir) {
		if wd, err := os.Getwd(); err == nil && strings.HasPrefix(dir+stop, wd+stop) {
			stop = wd
		} else {
			stop = filepath.Dir(dir)
		}
	}
	for d := dir; d != "." && d != stop && d != string(filepath.Separator); d = filepath.Dir(d) {
		if info, err := os.Lstat(d); err == nil && info.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("its folder %s is a symbolic link: ask batch never writes through one; give the folder it points to", d)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return nil
}

// takeLock holds path's advisory lock, or says who holds it.
func takeLock(path string) (*os.File, error) {
	f, err := openNoFollow(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the lock: %w", err)
	}
	host, _ := os.Hostname()
	self := "pid " + strconv.Itoa(os.Getpid()) + " on " + host
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	// A lock this process held a moment ago can outlive its Close in a
	// child forked meanwhile that has not executed its program yet (the
	// descriptor closes on exec): it is waited for, briefly. Another
	// process's lock is refused at once.
	for wait := 0; errors.Is(err, syscall.EWOULDBLOCK) && holder(f) == self && wait < 40; wait++ {
		time.Sleep(50 * time.Millisecond)
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another ask batch (%s) is writing it: wait for it to end, or stop it", holder(f))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(self+"\n"), 0)
	}
	return f, nil
}

// holder is what the lock file says of the process holding it.
func holder(f *os.File) string {
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, 0)
	if s := strings.TrimSpace(string(buf[:n])); s != "" {
		return termtext.Safe(termtext.FirstLine(s))
	}
	return "whose pid is not written yet"
}

// removeLeftovers removes the new files a kill left before their rename
// (.FILE.123, .FILE.state.123): under the lock, no one is writing them.
func removeLeftovers(path string) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	for _, prefix := range []string{"." + base + ".", "." + base + ".state."} {
		matches, _ := filepath.Glob(filepath.Join(dir, globEscape(prefix)+"[0-9]*"))
		for _, m := range matches {
			if strings.Trim(strings.TrimPrefix(filepath.Base(m), prefix), "0123456789") != "" {
				continue
			}
			if info, err := os.Lstat(m); err == nil && info.Mode().IsRegular() {
				os.Remove(m)
			}
		}
	}
}

func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(s)
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
