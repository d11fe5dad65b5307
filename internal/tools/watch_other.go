//go:build !linux

package tools

import (
	"errors"
	"io/fs"
	"sync"
)

// statTimes: the change time is read only on Linux; elsewhere size, mtime
// and mode tell a change.
func statTimes(fs.FileInfo) (ctime int64, ino uint64) { return 0, 0 }

// fsNow: without the kernel's watch every file is stamped, and judged by
// its stamp.
func fsNow(string) int64 { return 0 }

func newKernelWatch(*Root, *sync.Mutex) (kernelWatch, error) {
	return nil, errors.New("no inotify on this system")
}
