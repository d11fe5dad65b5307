package run

import (
	"errors"
	"fmt"
)

// Kind says what went wrong in terms a caller maps to an exit code; the
// mapping itself belongs to the CLI.
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
	// Auth is a credential refused: an MCP server's answer of 401 or 403.
	Auth
)

// Error is a fault of a kind.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usagef is a usage error.
func Usagef(format string, args ...any) error {
	return &Error{Kind: Usage, Err: fmt.Errorf(format, args...)}
}

// asKind gives err a kind, keeping its message.
func asKind(kind Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: kind, Err: err}
}

// KindOf reports the kind of an error made here, and false for errors of
// other packages (a provider's *APIError, a cancelled context), which the
// caller classifies by their own types.
func KindOf(err error) (Kind, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind, true
	}
	return 0, false
}
