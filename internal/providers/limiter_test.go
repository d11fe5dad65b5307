package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingLimiter records what a Caller tells its Limiter.
type countingLimiter struct {
	mu        sync.Mutex
	waits     int
	throttled []time.Duration
	succeeded int
}

func (l *countingLimiter) Wait(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waits++
	return nil
}

func (l *countingLimiter) Throttled(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.throttled = append(l.throttled, d)
}

func (l *countingLimiter) Succeeded() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.succeeded++
}

// TestCallerTellsItsLimiter: each attempt waits on the limiter, a 429 or
// 529 tells it the Retry-After, a 2xx tells it of the success; a 503 is
// not a throttle.
func TestCallerTellsItsLimiter(t *testing.T) {
	t.Parallel()
	statuses := []int{http.StatusTooManyRequests, 529, http.StatusServiceUnavailable, http.StatusOK}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := statuses[n.Add(1)-1]
		if s == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "2")
		}
		w.WriteHeader(s)
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	lim := &countingLimiter{}
	c := &Caller{Provider: "p", Protocol: echoProtocol{}, BaseURL: srv.URL, Retries: 3, Limiter: lim,
		Sleep: func(context.Context, time.Duration) error { return nil }}
	resp, err := c.Post(context.Background(), srv.URL, []byte(`{}`), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if lim.waits != 4 || lim.succeeded != 1 {
		t.Errorf("%d waits and %d successes, want 4 and 1", lim.waits, lim.succeeded)
	}
	if len(lim.throttled) != 2 || lim.throttled[0] != 2*time.Second || lim.throttled[1] != 0 {
		t.Errorf("throttled %v, want [2s 0s]", lim.throttled)
	}
}
