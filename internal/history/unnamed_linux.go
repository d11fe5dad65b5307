package history

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// OpenUnnamed opens a new file in dir that has no name yet (O_TMPFILE):
// nothing in the directory shows it, and it vanishes if the process dies
// before Link names it. Creating a file is the dear part of keeping a run
// (ext4 looks for a free inode), so a run opens its copy's file while it
// waits for the model, and Link only names it. nil means the system
// cannot (a kernel before 3.11, a file system such as NFS): the caller
// creates the file by name instead.
func OpenUnnamed(dir string) *os.File {
	// Link names the file through /proc/self/fd: without it, a file
	// could be opened but never named.
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil
	}
	f, err := os.OpenFile(dir, unix.O_TMPFILE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil
	}
	return f
}

// Link writes data (if any more) to f, a file from OpenUnnamed, gives it
// the name path, which must not exist, and closes it. On an error the file
// is closed unnamed, and so gone.
func Link(f *os.File, data []byte, path string) error {
	_, err := f.Write(data)
	if err == nil {
		// linkat(2) names an O_TMPFILE file through /proc/self/fd;
		// AT_EMPTY_PATH, the other way, needs CAP_DAC_READ_SEARCH.
		fd := strconv.FormatUint(uint64(f.Fd()), 10)
		err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+fd, unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	}
	return errors.Join(err, f.Close())
}
