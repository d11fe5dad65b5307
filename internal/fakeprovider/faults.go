package fakeprovider

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"time"
	"unicode/utf8"
)

// This file adds the misbehaving servers that fault tests need: each
// request is answered by the next of a list of handlers, which may be
// scripted replies or faults.

// StartSteps serves each request with the next of steps (the last one
// repeats), recording requests as Start does.
func StartSteps(steps ...http.Handler) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.requests = append(s.requests, body)
		s.headers = append(s.headers, r.Header.Clone())
		i := min(s.next, len(steps)-1)
		s.next++
		s.mu.Unlock()
		steps[i].ServeHTTP(w, r)
	}))
	return s
}

// Serve answers with a scripted reply, exactly as Start would.
func Serve(reply Reply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		one := &Server{replies: []Reply{reply}}
		one.serve(w, r)
	})
}

// HTMLPage is an error page of the kind a proxy or load balancer sends in
// place of the provider's JSON.
func HTMLPage(status int, title string) Reply {
	return Reply{
		Status:      status,
		ContentType: "text/html; charset=utf-8",
		Body: fmt.Sprintf("<!DOCTYPE html>\n<html><head><title>%s</title></head>\n<body><h1>%s</h1><p>nginx</p></body></html>\n",
			title, title),
	}
}

// hangLimit keeps a hanging handler from outliving a test that forgot to
// disconnect.
const hangLimit = 30 * time.Second

// Hang accepts the request and never answers, until the client gives up.
func Hang() http.Handler {
	return http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(hangLimit):
		}
	})
}

// StreamThenStall sends the start of a stream, then goes silent without
// closing the connection, until the client gives up.
func StreamThenStall(prefix []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(prefix)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(hangLimit):
		}
	})
}

// StreamThenReset sends the start of a stream, then resets the connection
// (a TCP RST, as a crashed proxy or a dropped mobile link gives).
func StreamThenReset(prefix []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(prefix)
		w.(http.Flusher).Flush()
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		buf.Flush()
		if tcp, ok := conn.(*net.TCPConn); ok {
			tcp.SetLinger(0) // close with RST rather than FIN
		}
		conn.Close()
	})
}

// Trickle sends body in pieces, flushing and pausing after each: every
// multi-byte UTF-8 character is cut in two, so that its halves arrive in
// separate reads.
func Trickle(body []byte, contentType string, pause time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		for _, piece := range SplitInsideRunes(body) {
			if _, err := w.Write(piece); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-time.After(pause):
			case <-r.Context().Done():
				return
			}
		}
	})
}

// SplitInsideRunes cuts b after the first byte of every multi-byte UTF-8
// character; joined again the pieces are b.
func SplitInsideRunes(b []byte) [][]byte {
	var pieces [][]byte
	start := 0
	for i := 0; i < len(b); {
		_, size := utf8.DecodeRune(b[i:])
		if size > 1 {
			pieces = append(pieces, b[start:i+1])
			start = i + 1
		}
		i += size
	}
	return append(pieces, b[start:])
}
