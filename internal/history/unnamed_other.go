//go:build !linux

package history

import (
	"errors"
	"os"
)

// OpenUnnamed is nil where files cannot be opened without a name: the
// caller creates the file by name.
func OpenUnnamed(dir string) *os.File { return nil }

// Link is never called without a file from OpenUnnamed.
func Link(f *os.File, data []byte, path string) error {
	return errors.Join(errors.New("history: no unnamed files on this system"), f.Close())
}
