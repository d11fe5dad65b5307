package providers

import (
	"context"
	"fmt"
	"io"
	"time"
)

// The waits between reads of a reply still pending: the first, doubled
// each time up to the last. OpenAI's background guide polls every 2 s.
const (
	firstPoll = 500 * time.Millisecond
	lastPoll  = 10 * time.Second
)

// cancelWait bounds the cancel sent for a pending reply once the run has
// stopped waiting for it.
const cancelWait = 10 * time.Second

// await reads a reply that p says is pending again until it is done, and
// returns the finished body; nil when body was done already. Reading again
// is not recorded as requests of its own: the finished body stands as the
// reply to the request that queued it, so a replay needs no reads. When
// ctx ends first, or a read fails, the reply is cancelled, so that the
// provider stops work (and billing) that nobody will read.
func (c *Caller) await(ctx context.Context, p Poller, body []byte) (done []byte, err error) {
	poll, cancel, pending := p.Pending(c.BaseURL, body)
	if !pending {
		return nil, nil
	}
	defer func() {
		if err != nil {
			c.cancel(ctx, cancel)
		}
	}()
	sleep := c.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	wait := firstPoll
	for {
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
		wait = min(wait*2, lastPoll)
		resp, err := c.Get(ctx, poll, Hooks{})
		if err != nil {
			return nil, fmt.Errorf("read the queued reply again: %w", err)
		}
		body, err = io.ReadAll(&capReader{r: resp.Body, left: MaxResponseBytes})
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if _, _, pending = p.Pending(c.BaseURL, body); !pending {
			return body, nil
		}
	}
}

// cancel asks the provider to stop a pending reply, within cancelWait and
// whether or not ctx has ended; its outcome changes nothing for the run.
func (c *Caller) cancel(ctx context.Context, url string) {
	if url == "" {
		return
	}
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
	defer stop()
	once := *c
	once.Retries = 0
	if resp, err := once.Post(ctx, url, nil, Hooks{}); err == nil {
		resp.Body.Close()
	}
}
