package records

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Create opens path for a new transcript: created 0600 (a transcript holds
// prompts, answers and what tools read), never through a symbolic link,
// and never into a file that has other names (a link a checkout planted
// would otherwise have ask overwrite what it points to). An existing
// regular file of one name is emptied and made 0600.
func Create(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symbolic link: a transcript is never written through one", path)
		}
		return nil, err
	}
	fail := func(err error) (*os.File, error) {
		f.Close()
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if !info.Mode().IsRegular() {
		return fail(fmt.Errorf("%s is not a regular file", path))
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return fail(fmt.Errorf("%s has other names (hard links): a transcript is never written into a shared file", path))
	}
	if err := f.Truncate(0); err != nil {
		return fail(err)
	}
	if info.Mode().Perm() != 0o600 {
		if err := f.Chmod(0o600); err != nil {
			return fail(err)
		}
	}
	return f, nil
}
