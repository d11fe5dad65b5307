package batch

import (
	"context"
	"sync"
	"time"
)

// Limiter is the one pace of a process's requests (providers.Limiter): a
// 429 or 529 holds every request back for the server's Retry-After (or a
// back-off that doubles while they go on), and halves how many runs may
// be under way; each run of successes as long as that number adds one
// back, up to -j.
type Limiter struct {
	mu        sync.Mutex
	now       func() time.Time
	until     time.Time // no request before
	strikes   int       // throttles since the last success
	limit     int       // runs allowed at once
	max       int
	streak    int // successes since the limit last grew
	running   int
	changed   chan struct{} // closed when running or limit changes
	throttles int
}

// maxHold is the longest the limiter holds requests back on its own
// count; a server's Retry-After past the caller's own limit fails the
// call there.
const maxHold = 60 * time.Second

// NewLimiter allows j runs at once.
func NewLimiter(j int) *Limiter {
	return &Limiter{now: time.Now, limit: max(j, 1), max: max(j, 1), changed: make(chan struct{})}
}

// Wait blocks until requests may go again.
func (l *Limiter) Wait(ctx context.Context) error {
	for {
		l.mu.Lock()
		d := l.until.Sub(l.now())
		l.mu.Unlock()
		if d <= 0 {
			return nil
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		}
	}
}

// Throttled holds every request back and halves the runs allowed.
func (l *Limiter) Throttled(retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.throttles++
	l.strikes++
	wait := retryAfter
	if wait <= 0 {
		wait = 500 * time.Millisecond << min(l.strikes-1, 4)
	}
	if until := l.now().Add(min(wait, maxHold)); until.After(l.until) {
		l.until = until
	}
	l.limit = max(1, l.limit/2)
	l.streak = 0
	l.broadcast()
}

// Succeeded counts a request the server took.
func (l *Limiter) Succeeded() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.strikes = 0
	if l.limit >= l.max {
		return
	}
	l.streak++
	if l.streak >= l.limit {
		l.limit++
		l.streak = 0
		l.broadcast()
	}
}

// Acquire waits for a place among the runs allowed at once.
func (l *Limiter) Acquire(ctx context.Context) error {
	for {
		l.mu.Lock()
		if l.running < l.limit {
			l.running++
			l.mu.Unlock()
			return nil
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// Release gives the place back.
func (l *Limiter) Release() {
	l.mu.Lock()
	l.running--
	l.broadcast()
	l.mu.Unlock()
}

// Allowed is how many runs may be under way now.
func (l *Limiter) Allowed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit
}

func (l *Limiter) broadcast() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Throttles counts the 429s and 529s seen.
func (l *Limiter) Throttles() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.throttles
}
