package providers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Hooks let the caller's user watch a call: the loop records requests,
// responses and retries as transcript events and shows text as it arrives.
// Every hook may be nil.
type Hooks struct {
	OnDelta func(text string)
	// OnThought receives the model's thinking where the provider shows
	// it: before the text of a reply read whole, after a stream's.
	OnThought  func(text string)
	OnRequest  func(url string, header http.Header, body []byte)
	OnResponse func(status int, header http.Header, body []byte)
	OnRetry    func(attempt int, delay time.Duration, err error)
}

// Caller sends requests of one protocol to one configured provider over
// HTTP, with retries. It is the only place that does network I/O for the
// protocols.
type Caller struct {
	Provider string // configured name, used in errors
	Protocol Protocol
	BaseURL  string
	Model    string
	Key      string
	Header   http.Header // fixed extra headers, such as OpenRouter's attribution
	HTTP     *http.Client
	Retries  int // retries after the first attempt
	// Cache is how requests that say nothing of caching ask for it.
	Cache Cache
	// Temperature and Reasoning are the run's settings (--temperature,
	// --reasoning), sent with every request that sets neither.
	Temperature *float64
	Reasoning   string
	// Tier is the run's --tier, sent with every request that sets none.
	Tier string
	// Fallback, when set, is asked about a call that failed: a protocol
	// it returns becomes Protocol from then on, and the request is sent
	// again in it (the run's switch to the text tool protocol when a
	// provider refuses tools for the model). It switches at most once.
	Fallback func(err error) Protocol

	// IdleTimeout ends a stream that sends nothing for this long; 0 means
	// no limit.
	IdleTimeout time.Duration

	// Sleep waits between attempts; nil waits for real. Replays and tests
	// replace it.
	Sleep func(ctx context.Context, d time.Duration) error

	// Limiter, when set, is shared by every caller of the process (ask
	// batch): each attempt waits on it, and a 429 or 529 slows them all.
	Limiter Limiter
}

// Limiter paces the requests of many callers as one: a provider's rate
// limit is the account's, not one run's.
type Limiter interface {
	// Wait blocks until a request may go, or ctx ends.
	Wait(ctx context.Context) error
	// Throttled is told of a 429 or 529, with the server's Retry-After (0
	// when it gave none).
	Throttled(retryAfter time.Duration)
	// Succeeded is told of a request the server took.
	Succeeded()
}

// CurrentProtocol returns c.Protocol, which the loop renders history in.
func (c *Caller) CurrentProtocol() Protocol { return c.Protocol }

// Build renders req as Call sends it: what req leaves unset (the model,
// caching, temperature, reasoning) is the caller's.
func (c *Caller) Build(req Request) ([]byte, error) {
	if req.Model == "" {
		req.Model = c.Model
	}
	if req.Cache == (Cache{}) {
		req.Cache = c.Cache
	}
	if req.Temperature == nil {
		req.Temperature = c.Temperature
	}
	if req.Reasoning == "" {
		req.Reasoning = c.Reasoning
	}
	if req.Tier == "" {
		req.Tier = c.Tier
	}
	body, err := c.Protocol.BuildRequest(req)
	if err != nil {
		return nil, fmt.Errorf("%s: build request: %w", c.Provider, err)
	}
	return body, nil
}

// Call renders req, sends it and reads the reply, streamed or not.
func (c *Caller) Call(ctx context.Context, req Request, h Hooks) (*Turn, error) {
	turn, err := c.call(ctx, req, h)
	if err == nil || c.Fallback == nil {
		return turn, err
	}
	next := c.Fallback(err)
	if next == nil {
		return turn, err
	}
	c.Protocol, c.Fallback = next, nil
	return c.call(ctx, req, h)
}

func (c *Caller) call(ctx context.Context, req Request, h Hooks) (*Turn, error) {
	body, err := c.Build(req)
	if err != nil {
		return nil, err
	}
	resp, err := c.Post(ctx, c.Protocol.Endpoint(c.BaseURL, c.Model, req.Stream), body, h)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()

	var raw bytes.Buffer
	var turn *Turn
	body2 := newIdleReader(cutReader{resp.Body}, c.IdleTimeout)
	defer body2.stop()
	// The cap also bounds raw, the copy kept for the response event.
	br := bufio.NewReader(&capReader{r: body2, left: MaxResponseBytes})
	// A provider may answer a stream request with one JSON document (an
	// error, or a server that ignores "stream"); only SSE can tell by the
	// first byte.
	if req.Stream && (c.Protocol.Framing() == NDJSON || !StartsWithJSON(br)) {
		turn, err = readProtocolStream(c.Protocol, io.TeeReader(br, &raw), h.OnDelta)
		if err == nil && h.OnThought != nil && turn.Reasoning != "" {
			h.OnThought(turn.Reasoning)
		}
	} else {
		_, err = io.Copy(&raw, br)
		if p, ok := c.Protocol.(Poller); ok && err == nil {
			var done []byte
			if done, err = c.await(ctx, p, raw.Bytes()); err == nil && done != nil {
				raw.Reset()
				raw.Write(done)
			}
		}
		if err == nil {
			turn, err = ParseBody(c.Protocol, raw.Bytes())
			if err == nil && h.OnThought != nil && turn.Reasoning != "" {
				h.OnThought(turn.Reasoning)
			}
			if err == nil && h.OnDelta != nil && turn.Text != "" {
				h.OnDelta(turn.Text)
			}
		}
	}
	if err == nil {
		err = checkArguments(turn)
	}
	if h.OnResponse != nil {
		h.OnResponse(resp.StatusCode, Redact(resp.Header), c.hideKey(recordedBody(raw.Bytes(), err)))
	}
	if err != nil {
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.Provider == "" {
			apiErr.Provider = c.Provider
		}
		if ctxErr := context.Cause(ctx); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, c.hideKeyInError(fmt.Errorf("%s: read response: %w", c.Provider, err))
	}
	return turn, nil
}

// Caps on what one reply may hold (man/ask.1, LIMITS): a reply over them
// is refused as malformed, so that a provider cannot make ask hold or
// record without bound.
const (
	// MaxResponseBytes caps one response body, streamed or not.
	MaxResponseBytes = 32 << 20
	// MaxArgumentBytes caps the arguments of one tool call.
	MaxArgumentBytes = 4 << 20
)

// ErrResponseTooLarge marks a response body longer than MaxResponseBytes.
var ErrResponseTooLarge = fmt.Errorf("%w: the reply is larger than %d MiB, the most ask reads of one reply",
	ErrMalformed, MaxResponseBytes>>20)

// capReader fails with ErrResponseTooLarge once more than left bytes have
// been read.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, ErrResponseTooLarge
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1] // one byte over the cap is enough to know
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n - 1, ErrResponseTooLarge
	}
	return n, err
}

// keptOfRefused is how much of a reply refused for its size the response
// event keeps: enough to see what it was, without copying the whole of it
// again and again on its way into the transcript.
const keptOfRefused = 64 << 10

// recordedBody is what the response event records of body: all of it,
// unless the reply was refused for its size.
func recordedBody(body []byte, err error) []byte {
	refused := errors.Is(err, ErrResponseTooLarge) || errors.Is(err, ErrArgumentsTooLarge)
	if !refused || len(body) <= keptOfRefused {
		return body
	}
	return fmt.Appendf(body[:keptOfRefused:keptOfRefused], "\n[ask: the rest was not kept: the reply was over a cap (%v)]\n", err)
}

// ErrArgumentsTooLarge marks a reply with a call whose arguments are over
// MaxArgumentBytes.
var ErrArgumentsTooLarge = fmt.Errorf("%w: tool call arguments over %d MiB", ErrMalformed, MaxArgumentBytes>>20)

// checkArguments refuses a turn with a call whose arguments are over
// MaxArgumentBytes.
func checkArguments(turn *Turn) error {
	for _, call := range turn.Calls {
		if len(call.Arguments) > MaxArgumentBytes {
			return &tooLarge{fmt.Sprintf("%v: the arguments of the %s call are larger than %d MiB, the most ask takes for one call",
				ErrMalformed, call.Name, MaxArgumentBytes>>20)}
		}
	}
	return nil
}

// tooLarge is an ErrArgumentsTooLarge that names the call.
type tooLarge struct{ msg string }

func (e *tooLarge) Error() string { return e.msg }
func (e *tooLarge) Is(target error) bool {
	return target == ErrArgumentsTooLarge || target == ErrMalformed
}

// Post sends body to url with the provider's credentials, retrying
// connection errors and retryable statuses. A non-2xx answer after the last
// attempt becomes an *APIError. The caller closes the response body.
func (c *Caller) Post(ctx context.Context, url string, body []byte, h Hooks) (*http.Response, error) {
	return c.send(ctx, http.MethodPost, url, body, h)
}

// Get reads url with the provider's credentials, as Post sends.
func (c *Caller) Get(ctx context.Context, url string, h Hooks) (*http.Response, error) {
	return c.send(ctx, http.MethodGet, url, nil, h)
}

func (c *Caller) send(ctx context.Context, method, url string, body []byte, h Hooks) (*http.Response, error) {
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	for attempt := 0; ; attempt++ {
		var reqBody io.Reader
		if body != nil {
			reqBody = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, url, reqBody)
		if err != nil {
			return nil, fmt.Errorf("%s: the request URL: %w", c.Provider, withoutURL(err))
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("User-Agent", "ask")
		for k, vs := range c.Header {
			req.Header[k] = vs
		}
		c.Protocol.Authorize(req.Header, c.Key)
		if h.OnRequest != nil {
			h.OnRequest(RedactURL(string(c.hideKey([]byte(url)))), Redact(req.Header), body)
		}

		if c.Limiter != nil {
			if err := c.Limiter.Wait(ctx); err != nil {
				return nil, err
			}
		}
		resp, err := client.Do(req)
		var failure error
		var retryAfter time.Duration
		switch {
		case err != nil:
			if ctxErr := context.Cause(ctx); ctxErr != nil {
				return nil, ctxErr
			}
			// A transport that answers for the provider (ask batch
			// --batch-api) fails with the error of its own request.
			var apiErr *APIError
			if errors.As(err, &apiErr) {
				apiErr.Provider = c.Provider
				return nil, apiErr
			}
			failure = c.hideKeyInError(fmt.Errorf("%s: %w", c.Provider, scrubURLError(err)))
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			if c.Limiter != nil {
				c.Limiter.Succeeded()
			}
			return resp, nil
		default:
			data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			// Some proxies echo the request, credentials and all, in their
			// error pages.
			data = c.hideKey(data)
			if h.OnResponse != nil {
				h.OnResponse(resp.StatusCode, Redact(resp.Header), data)
			}
			apiErr := DecodeError(resp.StatusCode, data)
			apiErr.Provider = c.Provider
			apiErr.URL = RedactURL(string(c.hideKey([]byte(url))))
			if !apiErr.Retryable() || resp.Header.Get("X-Should-Retry") == "false" {
				return nil, apiErr
			}
			failure = apiErr
			retryAfter = parseRetryAfter(resp.Header, time.Now())
			if c.Limiter != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == 529) {
				c.Limiter.Throttled(retryAfter)
			}
		}
		if attempt >= c.Retries {
			return nil, failure
		}
		delay := backoff(attempt, retryAfter)
		if delay < 0 {
			return nil, failure // the server asked for a wait longer than we will sit through
		}
		if h.OnRetry != nil {
			h.OnRetry(attempt+1, delay, failure)
		}
		sleep := c.Sleep
		if sleep == nil {
			sleep = sleepCtx
		}
		if err := sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
}

// maxRetryWait is the longest server-requested wait honoured; a longer one
// fails the call at once rather than hanging a script for an hour.
const maxRetryWait = 60 * time.Second

// backoff is 0.5 s doubled each attempt, capped at 8 s, less up to 25 %
// jitter so that many clients do not retry in step; a server's Retry-After
// wins. It returns -1 when the server's wait is too long.
func backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		if retryAfter > maxRetryWait {
			return -1
		}
		return retryAfter
	}
	d := 500 * time.Millisecond << min(attempt, 4)
	return d - time.Duration(rand.Float64()*0.25*float64(d))
}

// parseRetryAfter reads Retry-After-Ms, then Retry-After as seconds or an
// HTTP date.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return clampDuration(ms, time.Millisecond)
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return clampDuration(s, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// clampDuration is n units as a Duration, the longest Duration when that is
// too long to represent: converting such a float wraps round to a negative
// wait, which would read as no Retry-After at all.
func clampDuration(n float64, unit time.Duration) time.Duration {
	d := n * float64(unit)
	if d >= math.MaxInt64 { // also +Inf
		return math.MaxInt64
	}
	return time.Duration(d)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// StartsWithJSON peeks past white space at the first byte of a body and
// reports whether it opens a JSON object or array: a provider may answer a
// stream request with one JSON document (an error, or a server that
// ignores "stream").
func StartsWithJSON(br *bufio.Reader) bool {
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err != nil || len(b) < i {
			return false
		}
		switch b[i-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			return true
		default:
			return false
		}
	}
}

// ErrIdle marks a response that sent nothing for longer than the idle
// timeout.
var ErrIdle = errors.New("no data from the provider within the idle timeout")

// idleReader closes a body that goes quiet for too long, which unblocks a
// Read stuck on a silent server.
type idleReader struct {
	body  io.ReadCloser
	d     time.Duration
	timer *time.Timer
	fired atomic.Bool
}

func newIdleReader(body io.ReadCloser, d time.Duration) *idleReader {
	r := &idleReader{body: body, d: d}
	if d > 0 {
		r.timer = time.AfterFunc(d, func() {
			r.fired.Store(true)
			body.Close()
		})
	}
	return r
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if r.timer != nil {
		if r.fired.Load() {
			return n, fmt.Errorf("%w (%s)", ErrIdle, r.d)
		}
		if n > 0 {
			r.timer.Reset(r.d)
		}
	}
	return n, err
}

func (r *idleReader) stop() {
	if r.timer != nil {
		r.timer.Stop()
	}
}

// Close stops the idle timer and closes the body.
func (r *idleReader) Close() error {
	r.stop()
	return r.body.Close()
}

// NewIdleBody wraps a response body so that a read fails with ErrIdle once
// the server has sent nothing for d, as the Caller's own reads do; d <= 0
// sets no limit. Closing it stops the timer. It is for commands that read
// a response themselves, such as `ask provider send`.
func NewIdleBody(body io.ReadCloser, d time.Duration) io.ReadCloser {
	return newIdleReader(body, d)
}

// cutReader marks a body that fails part-way (the connection reset or
// closed early) as ErrStreamCut, so that a broken answer is reported as one
// rather than as a bare "unexpected EOF".
type cutReader struct{ body io.ReadCloser }

func (r cutReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if err != nil && err != io.EOF {
		err = &cutError{err}
	}
	return n, err
}

func (r cutReader) Close() error { return r.body.Close() }

type cutError struct{ err error }

func (e *cutError) Error() string {
	return "connection lost before the response was complete: " + e.err.Error()
}
func (e *cutError) Unwrap() error        { return e.err }
func (e *cutError) Is(target error) bool { return target == ErrStreamCut }

// Redact copies a header with every credential replaced, so that headers can
// be shown, logged and recorded.
func Redact(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		if isSecretHeader(k) {
			out[k] = []string{"[redacted]"}
			continue
		}
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func isSecretHeader(name string) bool {
	n := strings.ToLower(name)
	return n == "authorization" || n == "proxy-authorization" || n == "cookie" || n == "set-cookie" ||
		strings.Contains(n, "api-key") || strings.Contains(n, "token") || strings.Contains(n, "secret")
}

// withoutURL drops the URL from an error about it: the URL may carry a
// key or a password.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// ErrConnect marks a request that got no answer: the connection could not
// be made, or broke before the response's headers arrived.
var ErrConnect = errors.New("connection to the provider failed")

// scrubURLError drops the URL from a transport error, since some providers
// (and users' base URLs) carry credentials in the query string, and marks
// it as ErrConnect.
func scrubURLError(err error) error {
	return fmt.Errorf("%w: %v", ErrConnect, withoutURL(err))
}
