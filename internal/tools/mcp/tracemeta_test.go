package mcp

import (
	"context"
	"testing"

	oteltrace "go.opentelemetry.io/otel/trace"
)

// A call made under a span carries its W3C trace context in _meta; one
// made without carries no _meta at all.
func TestTraceMeta(t *testing.T) {
	t.Parallel()
	if m := traceMeta(context.Background()); m != nil {
		t.Errorf("without a span: _meta %v, want none", m)
	}
	tid, _ := oteltrace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := oteltrace.SpanIDFromHex("00f067aa0ba902b7")
	ts, _ := oteltrace.ParseTraceState("vendor=x")
	ctx := oteltrace.ContextWithSpanContext(context.Background(), oteltrace.NewSpanContext(oteltrace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: oteltrace.FlagsSampled, TraceState: ts}))
	m := traceMeta(ctx)
	if m["traceparent"] != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" || m["tracestate"] != "vendor=x" {
		t.Errorf("_meta = %v", m)
	}
}
