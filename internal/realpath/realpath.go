// Package realpath finds where a path leads when only part of it exists:
// a file a run is about to create, a worktree not made yet, a setting's
// path checked before anything is written there.
package realpath

import (
	"os"
	"path/filepath"
)

// Existing is path with the links of its deepest existing ancestor
// resolved and the rest, not there yet, joined on as written.
func Existing(path string) string {
	var missing []string
	cur := path
	for {
		// EvalSymlinks fails wherever Lstat does, and walks the path from
		// the root each time it is called: Lstat finds the deepest part
		// that exists with one call a level (the config file and state
		// directory hidden in every run are often missing).
		if _, err := os.Lstat(cur); err == nil {
			if real, err := filepath.EvalSymlinks(cur); err == nil {
				for i := len(missing) - 1; i >= 0; i-- {
					real = filepath.Join(real, missing[i])
				}
				return real
			}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return path
		}
		missing = append(missing, filepath.Base(cur))
		cur = parent
	}
}
