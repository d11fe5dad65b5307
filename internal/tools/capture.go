package tools

import (
	"fmt"
	"strings"
)

// headTail is an io.Writer that keeps the first head and the last tail
// bytes written to it and counts the rest, so that a command printing
// gigabytes costs head+tail bytes of memory. The start of an output says
// what ran, the end says how it failed; the middle is what gets dropped.
type headTail struct {
	headMax int
	head    []byte
	ring    []byte // the last bytes beyond head, circular once full
	next    int    // where the ring's next byte goes
	full    bool   // the ring has wrapped
	total   int64
}

func newHeadTail(head, tail int) *headTail {
	return &headTail{headMax: head, head: make([]byte, 0, head), ring: make([]byte, 0, tail)}
}

func (w *headTail) Write(p []byte) (int, error) {
	n := len(p)
	w.total += int64(n)
	if room := w.headMax - len(w.head); room > 0 {
		take := min(room, len(p))
		w.head = append(w.head, p[:take]...)
		p = p[take:]
	}
	tailMax := cap(w.ring)
	if len(p) == 0 || tailMax == 0 {
		return n, nil
	}
	if len(p) >= tailMax { // only the end of p can survive
		w.ring = append(w.ring[:0], p[len(p)-tailMax:]...)
		w.next, w.full = 0, true
		return n, nil
	}
	if !w.full {
		if room := tailMax - len(w.ring); len(p) <= room {
			w.ring = append(w.ring, p...)
			w.next = len(w.ring) % tailMax
			w.full = len(w.ring) == tailMax
			return n, nil
		}
		// Fill up, then wrap.
		room := tailMax - len(w.ring)
		w.ring = append(w.ring, p[:room]...)
		p = p[room:]
		w.next, w.full = 0, true
	}
	for len(p) > 0 {
		c := copy(w.ring[w.next:], p)
		p = p[c:]
		w.next = (w.next + c) % tailMax
	}
	return n, nil
}

// tail returns the ring's bytes in order.
func (w *headTail) tail() []byte {
	if !w.full {
		return w.ring
	}
	out := make([]byte, 0, len(w.ring))
	out = append(out, w.ring[w.next:]...)
	return append(out, w.ring[:w.next]...)
}

// String returns what was kept, with a note where bytes were dropped.
func (w *headTail) String() string {
	tail := w.tail()
	kept := int64(len(w.head) + len(tail))
	var sb strings.Builder
	sb.Write(w.head)
	if dropped := w.total - kept; dropped > 0 {
		fmt.Fprintf(&sb, "\n[... %d bytes dropped; %d bytes in all; only the first %d and last %d are shown ...]\n", dropped, w.total, len(w.head), len(tail))
	}
	sb.Write(tail)
	return validText(sb.String())
}
