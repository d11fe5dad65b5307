// Package interrupt stops a run cleanly when a signal comes or stdout's
// reader goes away, and says what exit code that is: 128 plus the signal's
// number, as shells report a process the signal killed.
package interrupt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/loop"
)

// OnSignals cancels the context on the first SIGINT, SIGTERM or SIGHUP,
// with the signal as its cause, so that the run stops cleanly and flushes
// its transcript; a second signal exits at once. SIGPIPE is caught so that
// a write to a closed stdout fails with EPIPE, which stops the run (see
// PipeWatch), instead of killing the process mid-transcript; the signal
// itself needs nothing more. A SIGINT or SIGHUP the process was started
// with ignored (a background job of a script, nohup) stays ignored, as it
// does for other programs: caught, it would stop the run.
func OnSignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	stopOn := []os.Signal{syscall.SIGTERM}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			stopOn = append(stopOn, sig)
		}
	}
	signal.Notify(sigs, stopOn...)
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	go func() {
		n := 0
		for sig := range sigs {
			n++
			if n == 1 {
				cancel(Cause(sig))
				continue
			}
			os.Exit(Code(Cause(sig)))
		}
	}()
	return ctx, func() { signal.Stop(sigs); signal.Stop(pipes); cancel(nil) }
}

// stopSignal is the cause of a run stopped by a signal, or by a reader that
// went away (a closed stdout, as SIGPIPE would say): an interruption whose
// exit code is 128 plus the signal's number. Ctrl-C is 130, SIGTERM 143,
// SIGHUP 129, SIGPIPE 141.
type stopSignal struct{ sig syscall.Signal }

func (s stopSignal) Error() string {
	switch s.sig {
	case syscall.SIGINT:
		return "interrupted"
	case syscall.SIGPIPE:
		return "interrupted: stdout was closed"
	}
	return fmt.Sprintf("interrupted by %s", signalName(s.sig))
}

// Is makes a stop by signal an interruption to the loop and to the exit
// code.
func (s stopSignal) Is(target error) bool { return target == loop.ErrInterrupted }

// ExitCode is 128 and the signal, as a shell reports it.
func (s stopSignal) ExitCode() int { return 128 + int(s.sig) }

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// Cause is the cause a signal gives the run's context.
func Cause(sig os.Signal) error {
	if s, ok := sig.(syscall.Signal); ok {
		return stopSignal{s}
	}
	return loop.ErrInterrupted
}

// Code is the exit code of an interrupted run: the stopping signal's,
// else 130.
func Code(err error) int {
	var s stopSignal
	if errors.As(err, &s) {
		return s.ExitCode()
	}
	return fault.ExitInterrupted
}

// ClosedWatch is stdout as every command writes to it: it notes a write
// that failed because the reader has gone.
type ClosedWatch struct {
	W      io.Writer
	Closed bool
}

func (c *ClosedWatch) Write(b []byte) (int, error) {
	n, err := c.W.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		c.Closed = true
	}
	return n, err
}

// PipeWatch is stdout as a run writes to it: once a write fails because
// the reader has gone (`ask --events | head -1`), it stops the run as an
// interruption, so that the run ends at once with its transcript whole
// rather than working on for nobody.
type PipeWatch struct {
	W    io.Writer
	Stop func(error)
}

func (p PipeWatch) Write(b []byte) (int, error) {
	n, err := p.W.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.Stop(stopSignal{syscall.SIGPIPE})
	}
	return n, err
}
