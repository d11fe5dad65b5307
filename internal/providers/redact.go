package providers

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
)

// minHiddenKey is the shortest key hidden in bodies and messages: replacing
// a key of a few characters would garble every text that happens to hold
// them, and no real provider issues such keys.
const minHiddenKey = 8

const redacted = "[redacted]"

// hideKey replaces the caller's key wherever it appears in b: in an error
// page that echoes the request's headers, in a URL that carries it. It
// returns b itself when there is nothing to hide.
func (c *Caller) hideKey(b []byte) []byte {
	if len(c.Key) < minHiddenKey || !bytes.Contains(b, []byte(c.Key)) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(c.Key), []byte(redacted))
}

// hideKeyInError returns err with the key replaced in its message; errors.Is
// and errors.As still see the original, whose *APIError (if any) has the
// key replaced in its Message too.
func (c *Caller) hideKeyInError(err error) error {
	if err == nil || len(c.Key) < minHiddenKey || !strings.Contains(err.Error(), c.Key) {
		return err
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		apiErr.Message = strings.ReplaceAll(apiErr.Message, c.Key, redacted)
	}
	return &hiddenKeyError{msg: strings.ReplaceAll(err.Error(), c.Key, redacted), err: err}
}

type hiddenKeyError struct {
	msg string
	err error
}

func (e *hiddenKeyError) Error() string { return e.msg }
func (e *hiddenKeyError) Unwrap() error { return e.err }

// RedactURL masks the password of a URL's user information
// ("http://user:xxxxx@host"), so that a base URL can be shown and recorded
// while the request still carries it. Text that is not a URL is returned
// as it is.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
