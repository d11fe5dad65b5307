package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// FlushTimeout bounds what Flush may add to the exit of ask: a collector
// that is down, slow or unreachable costs a run at most this (DESIGN §6:
// never more than a second).
const FlushTimeout = 800 * time.Millisecond

// exporters are the exporters made so far, one per config (key); most
// processes have none or one. The zero sync.Map costs nothing at init.
var exporters sync.Map

// exporter sends ended spans over OTLP/HTTP in the background, batched,
// and never makes a run wait for a collector but in Flush, which is
// bounded.
type exporter struct {
	cfg    config
	client *http.Client

	mu      sync.Mutex
	queue   []*span
	timer   *time.Timer
	dropped int
	lastErr error
	running sync.WaitGroup // exports under way
}

// exporterFor returns the process's exporter for cfg, making it on first
// use.
func exporterFor(cfg config) *exporter {
	key := cfg.key()
	if e, ok := exporters.Load(key); ok {
		return e.(*exporter)
	}
	// Its own transport: the run's client may be pinned to a provider or a
	// test server; the proxy variables still apply.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.grpc {
		// gRPC is HTTP/2: with TLS for https, and with prior knowledge
		// (h2c) for http, as collectors on :4317 mostly listen.
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP2(true)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	e, _ := exporters.LoadOrStore(key, &exporter{cfg: cfg, client: &http.Client{Transport: tr}})
	return e.(*exporter)
}

// add queues an ended span; a full batch goes at once, others after the
// schedule delay.
func (e *exporter) add(s *span) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.queue) >= maxQueue {
		e.dropped++
		return
	}
	e.queue = append(e.queue, s)
	switch {
	case len(e.queue) >= batchSize:
		e.sendLocked()
	case e.timer == nil:
		e.timer = time.AfterFunc(e.cfg.delay, func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.timer = nil
			e.sendLocked()
		})
	}
}

// sendLocked starts sending the queue in the background.
func (e *exporter) sendLocked() {
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	if len(e.queue) == 0 {
		return
	}
	spans := e.queue
	e.queue = nil
	e.running.Add(1)
	go func() {
		defer e.running.Done()
		ctx, cancel := context.WithTimeout(context.Background(), e.cfg.timeout)
		defer cancel()
		err := e.post(ctx, spans)
		e.mu.Lock()
		defer e.mu.Unlock()
		if err != nil {
			e.lastErr = err
		}
	}()
}

// flush sends what is queued and waits for every export under way, until
// ctx ends.
func (e *exporter) flush(ctx context.Context) error {
	e.mu.Lock()
	e.sendLocked()
	e.mu.Unlock()
	done := make(chan struct{})
	go func() {
		e.running.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("traces not sent to %s within %s: %w", e.cfg.url, FlushTimeout, context.Cause(ctx))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.lastErr
	e.lastErr = nil
	if err == nil && e.dropped > 0 {
		err = fmt.Errorf("%d spans dropped: more than %d waited to be sent", e.dropped, maxQueue)
	}
	return err
}

// post sends one ExportTraceServiceRequest. Nothing is retried: a retry
// would outlive the run it reports on.
func (e *exporter) post(ctx context.Context, spans []*span) error {
	if e.cfg.grpc {
		return e.postGRPC(ctx, encodeRequest(e.cfg.resource, spans))
	}
	body := encodeRequest(e.cfg.resource, spans)
	var enc string
	if e.cfg.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body, enc = buf.Bytes(), "gzip"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("send traces: %w", err)
	}
	for k, v := range e.cfg.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "ask OTLP/HTTP exporter")
	if enc != "" {
		req.Header.Set("Content-Encoding", enc)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("send traces: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("send traces to %s: %s", e.cfg.url, resp.Status)
	}
	return nil
}

// Flush sends the spans every run of the process has ended and waits for
// them to be taken, until ctx ends: the CLI calls it at exit with
// FlushTimeout. Without traces it returns at once. The error says what was
// not sent; it is not the run's.
func Flush(ctx context.Context) error {
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	exporters.Range(func(_, v any) bool {
		wg.Add(1)
		go func(e *exporter) {
			defer wg.Done()
			if err := e.flush(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(v.(*exporter))
		return true
	})
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// FlushAtExit is Flush bounded by FlushTimeout.
func FlushAtExit() error {
	ctx, cancel := context.WithTimeout(context.Background(), FlushTimeout)
	defer cancel()
	return Flush(ctx)
}

// Flush sends the spans of the run's exporter (shared with the runs that
// export where it does), until ctx ends.
func (r *Run) Flush(ctx context.Context) error {
	if r == nil {
		return nil
	}
	return r.exp.flush(ctx)
}

// Flush sends the batch's spans, until ctx ends.
func (b *Batch) Flush(ctx context.Context) error {
	if b == nil {
		return nil
	}
	return b.exp.flush(ctx)
}
