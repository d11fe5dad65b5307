//go:build linux

package tools

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// statTimes is the inode's change time, which no command can set back,
// and its number.
func statTimes(info fs.FileInfo) (ctime int64, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano(), st.Ino
	}
	return 0, 0
}

// fsNow is the clock the file system in dir stamps files with: the ctime
// of a file made there and gone at once (O_TMPFILE: never named, so that
// nobody sees it). A file changed from now on has a ctime no earlier.
// Where none can be made (a directory ask may not write, a file system
// without O_TMPFILE), it is the kernel's clock floored to the second, so
// that a file system with coarser times is not ahead of it.
func fsNow(dir string) int64 {
	if fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600); err == nil {
		var st unix.Stat_t
		err := unix.Fstat(fd, &st)
		unix.Close(fd)
		if err == nil {
			return st.Ctim.Nano()
		}
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &ts); err != nil {
		return time.Now().Truncate(time.Second).UnixNano()
	}
	return ts.Sec * int64(time.Second)
}

// inotifyMask is what a watched directory reports: every way an entry in
// it can come, go or change (content, mode, owner, times, links), and the
// directory itself going away.
const inotifyMask = changedMask | unix.IN_CLOSE_WRITE |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// changedMask is what says surely that an entry changed; a close after
// writing alone does not (a program may open a file to write and write
// nothing), and is judged by the file's ctime.
const changedMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO

// inotify watches every directory of the tree; a reader drains the kernel's
// queue as it fills, so that a long command does not overflow it.
type inotify struct {
	root *Root
	mu   *sync.Mutex // the watcher's; guards what follows
	fd   int
	wake [2]int // a pipe: closing ends the reader
	done chan struct{}
	// running: the reader was started, and close must wait for it.
	running atomic.Bool

	dirs    map[int32]string // watch → directory, relative to the root
	touched map[string]bool
	gone    []string
	lost    bool
	err     error
	buf     []byte
}

func newKernelWatch(root *Root, mu *sync.Mutex) (kernelWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	k := &inotify{root: root, mu: mu, fd: fd, done: make(chan struct{}),
		dirs: map[int32]string{}, touched: map[string]bool{}, buf: make([]byte, 64<<10)}
	if err := unix.Pipe2(k.wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inotify: %w", err)
	}
	return k, nil
}

func (k *inotify) addDir(abs, rel string) error {
	wd, err := k.add(abs)
	if wd >= 0 {
		k.dirs[wd] = rel
	}
	return err
}

// addDirs adds many directories on two threads: the kernel looks each
// path up by itself, and that is most of what watching costs.
func (k *inotify) addDirs(abs, rels []string) error {
	wds := make([]int32, len(abs))
	errs := make([]error, len(abs))
	inTwo(len(abs), func(i int) { wds[i], errs[i] = k.add(abs[i]) })
	var first error
	for i, wd := range wds {
		if wd >= 0 {
			k.dirs[wd] = rels[i]
		}
		first = cmp.Or(first, errs[i])
	}
	return first
}

// add watches one directory; a directory gone already, or unreadable, is
// no error (nothing to hear from it) and has no watch (-1).
func (k *inotify) add(abs string) (int32, error) {
	wd, err := unix.InotifyAddWatch(k.fd, abs, inotifyMask)
	switch {
	case err == nil:
		return int32(wd), nil
	case errors.Is(err, unix.ENOSPC):
		return -1, fmt.Errorf("inotify: the limit of watched directories (fs.inotify.max_user_watches) is reached at %s", abs)
	case errors.Is(err, unix.ENOMEM):
		return -1, fmt.Errorf("inotify: %s: %w", abs, err)
	}
	return -1, nil
}

func (k *inotify) start() {
	k.running.Store(true)
	go k.read()
}

// read drains the queue whenever the kernel has something in it.
func (k *inotify) read() {
	defer close(k.done)
	fds := []unix.PollFd{{Fd: int32(k.fd), Events: unix.POLLIN}, {Fd: int32(k.wake[0]), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		k.mu.Lock()
		k.pump()
		k.mu.Unlock()
	}
}

// pump reads what the queue holds now.
func (k *inotify) pump() {
	for {
		n, err := unix.Read(k.fd, k.buf)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return
		case err != nil:
			k.err = fmt.Errorf("inotify: read: %w", err)
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(k.buf[off:]))
			mask := binary.NativeEndian.Uint32(k.buf[off+4:])
			size := int(binary.NativeEndian.Uint32(k.buf[off+12:]))
			name := k.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+size]
			off += unix.SizeofInotifyEvent + size
			k.event(wd, mask, strings.TrimRight(string(name), "\x00"))
		}
	}
}

func (k *inotify) event(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		k.lost = true
		return
	}
	dir, ok := k.dirs[wd]
	if !ok {
		return
	}
	if mask&unix.IN_IGNORED != 0 {
		delete(k.dirs, wd)
		return
	}
	if name == "" {
		// The directory's own events: its parent reports the same, but
		// not for the root.
		if dir == "" && mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
			k.lost = true
		}
		return
	}
	p := joinRel(dir, name)
	k.touched[p] = k.touched[p] || mask&changedMask != 0
	if mask&unix.IN_ISDIR == 0 {
		return
	}
	switch {
	case mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) != 0:
		k.gone = append(k.gone, p)
		if mask&unix.IN_MOVED_FROM != 0 {
			k.unwatch(p) // its watches would name it by its old path
		}
	case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		// A new tree: watch it, and take all it holds as touched, since
		// it may have filled before the watch was there.
		tree := map[string]stamp{}
		if err := k.root.scanDir(k.root.dir+"/"+p, p, tree, k.addDir); err != nil {
			k.err = err
		}
		for q := range tree {
			k.touched[q] = true
		}
	}
}

// unwatch stops watching a tree that moved away.
func (k *inotify) unwatch(p string) {
	for wd, d := range k.dirs {
		if within(d, p) {
			unix.InotifyRmWatch(k.fd, uint32(wd))
			delete(k.dirs, wd)
		}
	}
}

func (k *inotify) take() (map[string]bool, []string, bool, error) {
	k.pump()
	touched, gone, lost, err := k.touched, k.gone, k.lost, k.err
	k.touched, k.gone, k.lost = map[string]bool{}, nil, false
	return touched, gone, lost, err
}

func (k *inotify) forget(rel string) {
	k.pump()
	delete(k.touched, rel)
}

func (k *inotify) close() {
	unix.Close(k.wake[1])
	if k.running.Load() {
		<-k.done
	}
	unix.Close(k.wake[0])
	unix.Close(k.fd)
}
