package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/ask-cli/ask/internal/loop"
)

// stopSignal is the cause of a run stopped by a signal, or by a reader that
// went away (a closed stdout, as SIGPIPE would say): an interruption whose
// exit code is 128 plus the signal's number, as shells report a process
// the signal killed. Ctrl-C is 130, SIGTERM 143, SIGHUP 129, SIGPIPE 141.
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

// Is makes a stop by signal an interruption to the loop and to exitCode.
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

// stopCause is the cause a signal gives the run's context.
func stopCause(sig os.Signal) error {
	if s, ok := sig.(syscall.Signal); ok {
		return stopSignal{s}
	}
	return loop.ErrInterrupted
}

// interruptCode is the exit code of an interrupted run: the stopping
// signal's, else 130.
func interruptCode(err error) int {
	var s stopSignal
	if errors.As(err, &s) {
		return s.ExitCode()
	}
	return exitInterrupted
}

// pipeWatch is stdout as a run writes to it: once a write fails because
// the reader has gone (`ask --events | head -1`), it stops the run as an
// interruption, so that the run ends at once with its transcript whole
// rather than working on for nobody.
// closedWatch is stdout as every command writes to it: it notes a write
// that failed because the reader has gone.
type closedWatch struct {
	w      io.Writer
	closed bool
}

func (c *closedWatch) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		c.closed = true
	}
	return n, err
}

type pipeWatch struct {
	w    io.Writer
	stop func(error)
}

func (p pipeWatch) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.stop(stopSignal{syscall.SIGPIPE})
	}
	return n, err
}
