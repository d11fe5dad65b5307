package main

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/trace"
	"github.com/ask-cli/ask/internal/trace/tracetest"
)

// A traced run's spans are at the collector when ask returns: the exit
// flushes them, well before the exporter's own schedule would.
func TestTracesAreFlushedAtExit(t *testing.T) {
	t.Parallel()
	rcv := tracetest.Start(t)
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "42"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}}, "what is six times seven?")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "42" {
		t.Fatalf("code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if got := tracetest.Named(rcv.Spans(), "invoke_agent ask"); len(got) != 1 {
		t.Errorf("%d invoke_agent spans at the collector when ask returned, want 1", len(got))
	}
}

// A collector that accepts the connection and never answers neither fails
// the run nor holds its exit longer than trace.FlushTimeout (the bound is
// generous: the run itself is in it).
func TestTracesCollectorDownDoesNotHoldTheExit(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "42"})
	defer srv.Close()
	start := time.Now()
	r := runAsk(t, askEnv{server: srv, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + ln.Addr().String()}}, "q")
	took := time.Since(start)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "42" || r.stderr != "" {
		t.Fatalf("code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if bound := trace.FlushTimeout + 3*time.Second; took > bound {
		t.Errorf("ask took %s with the collector down; the flush may add %s (bound %s)", took, trace.FlushTimeout, bound)
	}
	t.Logf("ask took %s with a collector that never answers (flush bound %s)", took, trace.FlushTimeout)
}

// A batch is one trace: a span for the batch, one for each task under it,
// and each task's run under its task.
func TestBatchIsOneTraceAtTheCollector(t *testing.T) {
	t.Parallel()
	rcv := tracetest.Start(t)
	m := startEcho(t, 0)
	env := map[string]string{"XDG_STATE_HOME": t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}
	if r := runAsk(t, askEnv{server: m.Server, env: env}, "batch", "-j", "2", taskFile(t, 3)); r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	spans := rcv.Spans()
	batches, tasks, runs := tracetest.Named(spans, "ask batch"), tracetest.Named(spans, "ask batch task"), tracetest.Named(spans, "invoke_agent ask")
	batches = slices.DeleteFunc(batches, func(s tracetest.Span) bool { return s.Name != "ask batch" })
	if len(batches) != 1 || len(tasks) != 3 || len(runs) != 3 {
		t.Fatalf("%d batch, %d task and %d run spans, want 1, 3 and 3", len(batches), len(tasks), len(runs))
	}
	taskIDs := map[string]bool{}
	for _, s := range tasks {
		if s.TraceID != batches[0].TraceID || s.ParentID != batches[0].SpanID {
			t.Errorf("task span %s is not under the batch's", s.SpanID)
		}
		taskIDs[s.SpanID] = true
	}
	for _, s := range runs {
		if s.TraceID != batches[0].TraceID || !taskIDs[s.ParentID] {
			t.Errorf("run span %s is not under a task's span", s.SpanID)
		}
	}
}
