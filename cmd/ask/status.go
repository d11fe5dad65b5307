package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ask-cli/ask/internal/loop"
)

// statusLine is the one live line on stderr: the step, the tool running and
// the time so far. It draws only when stderr is a terminal, and only when
// something happens: there is no ticker.
type statusLine struct {
	mu      sync.Mutex
	w       io.Writer
	on      bool
	shown   bool
	started time.Time
}

func newStatusLine(w io.Writer, on bool) *statusLine {
	return &statusLine{w: w, on: on, started: time.Now()}
}

func (s *statusLine) progress(p loop.Progress) {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	what := "thinking"
	if p.Tool != "" {
		what = p.Tool + " " + shorten(p.Arguments, 60)
	}
	fmt.Fprintf(s.w, "\r\033[K· step %d/%d · %s · %.1fs", p.Step, p.MaxSteps, what, time.Since(s.started).Seconds())
	s.shown = true
}

func (s *statusLine) clear() {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown {
		io.WriteString(s.w, "\r\033[K")
		s.shown = false
	}
}
