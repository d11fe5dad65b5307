// Package fault names what went wrong in terms of ask's exit codes (DESIGN
// §7), for the packages that build and run a run (run, stage) and the one
// that exits (cmd/ask). It is a leaf: it knows no other package of ask.
package fault

import (
	"errors"
	"fmt"
)

// Kind says what went wrong.
type Kind int

const (
	// Failure is a fault on this side that stopped the run: a tool, a
	// file, an MCP server that would not start.
	Failure Kind = iota
	// Usage is bad input: a flag, a setting, a file named by either.
	Usage
	// Provider is the model's side failing: an HTTP error, a malformed
	// reply, a local model program that failed.
	Provider
	// Refused is a call the --safe profile refused.
	Refused
	// Auth is a credential missing or refused.
	Auth
)

// Exit codes of DESIGN §7.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitProvider    = 3
	ExitAuth        = 4
	ExitLimit       = 5
	ExitRefused     = 6
	ExitPaused      = 7 // a call was deferred: ask resume carries the run on
	ExitTimeout     = 124
	ExitInterrupted = 130
	ExitPipe        = 141
)

// Code is the exit code of a kind.
func (k Kind) Code() int {
	switch k {
	case Usage:
		return ExitUsage
	case Provider:
		return ExitProvider
	case Refused:
		return ExitRefused
	case Auth:
		return ExitAuth
	}
	return ExitFailure
}

// Error is a fault of a kind.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// New gives err a kind, keeping its message; nil stays nil.
func New(kind Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: kind, Err: err}
}

// Usagef is a usage error.
func Usagef(format string, args ...any) error {
	return &Error{Kind: Usage, Err: fmt.Errorf(format, args...)}
}

// KindOf reports the kind of an error given one here, and false for other
// errors (a provider's *APIError, a cancelled context), which the caller
// classifies by their own types.
func KindOf(err error) (Kind, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind, true
	}
	return 0, false
}

// Exit is an error whose exit code the command chose: one no kind gives
// (a --timeout reached is 124), or one a kind gives, said outright.
type Exit struct {
	Code int
	Err  error
}

func (e *Exit) Error() string { return e.Err.Error() }
func (e *Exit) Unwrap() error { return e.Err }

// ExitCode is the code chosen.
func (e *Exit) ExitCode() int { return e.Code }
