// Package noblock opens files for reading without blocking. A path that
// a repository or a model chose may name a FIFO, whose open waits for a
// writer past any cancellation; checking the path before opening races
// with one swapped in between. So the open itself does not block, and
// the caller checks the type of what it got.
package noblock

import (
	"io/fs"
	"os"
	"syscall"
)

// Open opens path for reading without blocking, and returns it with what
// fstat says of the descriptor opened. A regular file is returned in
// blocking mode, as a plain open leaves it.
func Open(path string) (*os.File, fs.FileInfo, error) {
	return opened(os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0))
}

// OpenIn is Open for rel under root.
func OpenIn(root *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	return opened(root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0))
}

func opened(f *os.File, err error) (*os.File, fs.FileInfo, error) {
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if info.Mode().IsRegular() {
		if err := setBlocking(f); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	return f, info, nil
}

// setBlocking clears O_NONBLOCK on f's descriptor.
func setBlocking(f *os.File) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var setErr error
	if err := sc.Control(func(fd uintptr) { setErr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return setErr
}
