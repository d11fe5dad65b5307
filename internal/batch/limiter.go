package batch

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
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
	// every is the gap --rate keeps between requests, 0 for none; next is
	// when the next request may go. A token bucket of one token: the
	// workers share it, so the process keeps the rate however many run.
	every time.Duration
	next  time.Time
}

// maxHold is the longest the limiter holds requests back on its own
// count; a server's Retry-After past the caller's own limit fails the
// call there.
const maxHold = 60 * time.Second

// NewLimiter allows j runs at once.
func NewLimiter(j int) *Limiter {
	return &Limiter{now: time.Now, limit: max(j, 1), max: max(j, 1), changed: make(chan struct{})}
}

// SetRate lets at most one request go every gap (--rate), 0 for no bound.
func (l *Limiter) SetRate(every time.Duration) {
	l.mu.Lock()
	l.every = every
	l.mu.Unlock()
}

// Wait blocks until requests may go again, and takes the request's turn
// under --rate.
func (l *Limiter) Wait(ctx context.Context) error {
	if err := l.waitThrottle(ctx); err != nil {
		return err
	}
	return sleep(ctx, l.turn())
}

// turn takes the next request's place under --rate: how long it waits.
// A bucket of one token: a gap left unused is not saved up as a burst.
func (l *Limiter) turn() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.every <= 0 {
		return 0
	}
	now := l.now()
	turn := l.next
	if turn.Before(now) {
		turn = now
	}
	l.next = turn.Add(l.every)
	return turn.Sub(now)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// waitThrottle blocks while a 429's Retry-After holds requests back.
func (l *Limiter) waitThrottle(ctx context.Context) error {
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

// ParseRate reads --rate: "N/s" or "N/m" (N may have a fraction: 0.5/s),
// as the gap between two requests.
func ParseRate(s string) (time.Duration, error) {
	n, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute}[strings.TrimSpace(unit)]
	f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
	switch {
	case !ok || per == 0 || err != nil:
		return 0, fmt.Errorf("--rate %q: give requests per second or minute, such as 10/s or 500/m", s)
	case f <= 0 || math.IsInf(f, 0) || math.IsNaN(f):
		return 0, fmt.Errorf("--rate %q: give more than 0 requests", s)
	}
	gap := time.Duration(float64(per) / f)
	if gap <= 0 {
		return 0, fmt.Errorf("--rate %q: more than one request a nanosecond is no bound: leave --rate out", s)
	}
	return gap, nil
}
