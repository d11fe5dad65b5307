package main

import (
	"time"

	"github.com/urfave/cli/v2"
)

// The network's time limits. They are variables so that tests can shorten
// them; users bound a whole run with --timeout instead.
var (
	// connectTimeout bounds opening a TCP connection; a provider that
	// cannot be reached fails (and is retried) rather than hanging.
	connectTimeout = 30 * time.Second
	// tlsHandshakeTimeout bounds the TLS handshake after connecting.
	tlsHandshakeTimeout = 15 * time.Second
	// responseHeaderTimeout bounds the wait for a response's headers, which
	// for a request without streaming come only once the whole answer is
	// written.
	responseHeaderTimeout = 5 * time.Minute
	// streamIdleTimeout ends a response that sends nothing for this long.
	streamIdleTimeout = 2 * time.Minute
)

// defaultRetries is how many times a failed request is tried again.
const defaultRetries = 2

func retriesFlag() cli.Flag {
	return &cli.IntFlag{Name: "retries", Value: defaultRetries, Usage: "retry a failed request (connection error, HTTP 408, 409, 429, 5xx) up to `N` times, with backoff"}
}

// retries reads --retries.
func retries(c *cli.Context) (int, error) {
	n := c.Int("retries")
	if n < 0 {
		return 0, usageErr("--retries must be 0 or more, got %d", n)
	}
	return n, nil
}
