package run

import "github.com/ask-cli/ask/internal/fault"

// The kinds of fault a run reports, for the CLI's exit code.
const (
	Failure  = fault.Failure
	Usage    = fault.Usage
	Provider = fault.Provider
	Refused  = fault.Refused
	Auth     = fault.Auth
)

// asKind gives err a kind, keeping its message.
func asKind(kind fault.Kind, err error) error { return fault.New(kind, err) }
