// Package termtest stands in for a terminal in tests: a stderr a test can
// read while another goroutine writes to it, and (on Linux) a
// pseudo-terminal.
package termtest

import (
	"strings"
	"sync"
)

// Buffer is a stderr that a test can read while a ticker or a tool's
// goroutine writes to it.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
