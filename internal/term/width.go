package term

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// Width is the width of the terminal fd is on, 0 when it is not one. Ask
// it at each use: a pane can be resized.
func Width(fd int) int {
	ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// Columns is how wide a line may be on a terminal: the kernel's word
// (bash does not export $COLUMNS), else $COLUMNS, else 80. A width of 20
// or less is taken for none. kernel may be nil.
func Columns(kernel func() int, getenv func(string) string) int {
	if kernel != nil {
		if n := kernel(); n > 20 {
			return n
		}
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 20 {
		return n
	}
	return 80
}
