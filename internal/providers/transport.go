package providers

import (
	"net"
	"net/http"
	"time"
)

// NetTimeouts are the network's time limits. Users bound a whole run with
// --timeout instead; tests shorten them.
type NetTimeouts struct {
	// Connect bounds opening a TCP connection; a provider that cannot be
	// reached fails (and is retried) rather than hanging.
	Connect time.Duration
	// TLSHandshake bounds the TLS handshake after connecting.
	TLSHandshake time.Duration
	// ResponseHeader bounds the wait for a response's headers, which for a
	// request without streaming come only once the whole answer is
	// written.
	ResponseHeader time.Duration
	// StreamIdle ends a response that sends nothing for this long.
	StreamIdle time.Duration
}

// DefaultNet are the limits a run has.
var DefaultNet = NetTimeouts{
	Connect:        30 * time.Second,
	TLSHandshake:   15 * time.Second,
	ResponseHeader: 5 * time.Minute,
	StreamIdle:     2 * time.Minute,
}

// NewTransport bounds connecting and waiting for response headers; a
// stream's silences are bounded by the caller's idle timeout instead.
func NewTransport(n NetTimeouts) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: n.Connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = n.TLSHandshake
	t.ResponseHeaderTimeout = n.ResponseHeader
	return t
}
