package providers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// NewTransport must bound connecting: with a limit that has already passed,
// even a listening local server cannot be reached.
func TestTransportConnectTimeout(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	quick := DefaultNet
	quick.Connect = time.Nanosecond
	tr := NewTransport(quick)
	_, err := (&http.Client{Transport: tr}).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("err = %v, want a connect timeout", err)
	}
	tr = NewTransport(DefaultNet)
	if tr.TLSHandshakeTimeout != DefaultNet.TLSHandshake || tr.ResponseHeaderTimeout != DefaultNet.ResponseHeader || tr.Proxy == nil {
		t.Errorf("transport: TLS %s, headers %s, proxy set %v", tr.TLSHandshakeTimeout, tr.ResponseHeaderTimeout, tr.Proxy != nil)
	}
}
