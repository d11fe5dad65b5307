// Package owned says whether a file or folder of ask's state directory
// may be someone else's doing: a state directory can be shared (a
// common XDG_STATE_HOME, a folder another user made first), and what ask
// reads there (a kept run, a sign-in) decides what it sends and runs.
package owned

import (
	"io/fs"
	"os"
	"syscall"
)

// Why says why info, a file's or folder's, may not be this user's own
// doing: another user owns it, or others may write it (a folder with
// the sticky bit keeps others from replacing what is in it). "" when
// neither.
func Why(info fs.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return "another user owns it"
	}
	if info.Mode().Perm()&0o022 != 0 && !(info.IsDir() && info.Mode()&fs.ModeSticky != 0) {
		return "others may write it"
	}
	return ""
}
