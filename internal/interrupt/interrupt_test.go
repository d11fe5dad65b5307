package interrupt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/ask-cli/ask/internal/loop"
)

func TestCauseAndCode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sig      os.Signal
		wantMsg  string
		wantCode int
	}{
		{syscall.SIGINT, "interrupted", 130},
		{syscall.SIGTERM, "interrupted by SIGTERM", 143},
		{syscall.SIGHUP, "interrupted by SIGHUP", 129},
		{syscall.SIGPIPE, "interrupted: stdout was closed", 141},
		{syscall.SIGQUIT, "interrupted by quit", 131},
	} {
		err := Cause(tt.sig)
		if err.Error() != tt.wantMsg {
			t.Errorf("%v: %q, want %q", tt.sig, err, tt.wantMsg)
		}
		if !errors.Is(err, loop.ErrInterrupted) {
			t.Errorf("%v: not an interruption to the loop", tt.sig)
		}
		if got := Code(fmt.Errorf("run: %w", err)); got != tt.wantCode {
			t.Errorf("%v: exit %d, want %d", tt.sig, got, tt.wantCode)
		}
	}
	if got := Code(loop.ErrInterrupted); got != 130 {
		t.Errorf("an interruption with no signal: exit %d, want 130", got)
	}
}

// brokenPipe fails every write as a closed pipe does.
type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// failing fails every write, not as a closed pipe.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, io.ErrShortWrite }

func TestWatchesTellAClosedPipe(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		w      io.Writer
		closed bool
	}{
		{"closed pipe", brokenPipe{}, true},
		{"other failure", failing{}, false},
		{"working writer", io.Discard, false},
	} {
		c := &ClosedWatch{W: tt.w}
		_, _ = c.Write([]byte("x"))
		if c.Closed != tt.closed {
			t.Errorf("%s: ClosedWatch.Closed %v, want %v", tt.name, c.Closed, tt.closed)
		}
		var stopped error
		p := PipeWatch{W: tt.w, Stop: func(err error) { stopped = err }}
		_, _ = p.Write([]byte("x"))
		if (stopped != nil) != tt.closed {
			t.Errorf("%s: PipeWatch stopped the run with %v, want a stop %v", tt.name, stopped, tt.closed)
		}
		if stopped != nil && Code(stopped) != 141 {
			t.Errorf("%s: a closed stdout exits %d, want 141", tt.name, Code(stopped))
		}
	}
}
