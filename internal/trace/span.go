package trace

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// OTLP span kinds and status codes (opentelemetry/proto/trace/v1).
const (
	kindInternal = 1
	kindClient   = 3

	statusError = 2
)

// span is one finished or running span, as OTLP carries it.
type span struct {
	ctx    oteltrace.SpanContext
	parent oteltrace.SpanID
	// remoteParent: the parent came from another process (TRACEPARENT).
	remoteParent bool
	name         string
	kind         int
	start, end   time.Time
	attrs        []attribute.KeyValue
	events       []spanEvent
	status       int
	statusMsg    string
}

type spanEvent struct {
	name  string
	time  time.Time
	attrs []attribute.KeyValue
}

func (s *span) set(kvs ...attribute.KeyValue) {
	for _, kv := range kvs {
		replaced := false
		for i := range s.attrs {
			if s.attrs[i].Key == kv.Key {
				s.attrs[i], replaced = kv, true
				break
			}
		}
		if !replaced {
			s.attrs = append(s.attrs, kv)
		}
	}
}

// fail marks the span failed with errorType, the error.type of the
// conventions.
func (s *span) fail(errorType, msg string) {
	s.set(attribute.String(keyErrorType, errorType))
	s.status, s.statusMsg = statusError, msg
}

// newTraceID and newSpanID are random, as W3C Trace Context asks.
func newTraceID() oteltrace.TraceID {
	var id oteltrace.TraceID
	for !id.IsValid() {
		_, _ = rand.Read(id[:])
	}
	return id
}

func newSpanID() oteltrace.SpanID {
	var id oteltrace.SpanID
	for !id.IsValid() {
		_, _ = rand.Read(id[:])
	}
	return id
}

// sampled decides whether a trace is recorded, as the sampler named by
// OTEL_TRACES_SAMPLER would: parent-based samplers follow a valid parent,
// ratio samplers keep the traces whose id falls under the ratio (the
// rule of the Go SDK's TraceIDRatioBased, so that the two agree).
func (c config) sampled(parent oteltrace.SpanContext, id oteltrace.TraceID) bool {
	name := c.sampler
	if len(name) > len("parentbased_") && name[:len("parentbased_")] == "parentbased_" {
		if parent.IsValid() {
			return parent.IsSampled()
		}
		name = name[len("parentbased_"):]
	}
	switch name {
	case "always_off":
		return false
	case "traceidratio":
		if c.ratio >= 1 {
			return true
		}
		bound := uint64(c.ratio * (1 << 63))
		return binary.BigEndian.Uint64(id[8:16])>>1 < bound
	}
	return true
}

// The OTLP protobuf encoding, by hand: the generated packages
// (go.opentelemetry.io/proto/otlp) register descriptors at init, and with
// the SDK and its exporter they cost every start of ask, traced or not,
// more than its init budget allows (cmd/ask TestInitBudget). The field
// numbers are those of opentelemetry/proto v1.x; the tests decode what
// this writes with the generated packages.

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendBytes(b []byte, field int, v []byte) []byte {
	b = appendTag(b, field, 2)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendString(b []byte, field int, v string) []byte {
	if v == "" {
		return b
	}
	b = appendTag(b, field, 2)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendVarint(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, field, 0), v)
}

func appendFixed64(b []byte, field int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, field, 1), v)
}

func appendFixed32(b []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(appendTag(b, field, 5), v)
}

// appendMessage appends field as a nested message that fn writes.
func appendMessage(b []byte, field int, fn func([]byte) []byte) []byte {
	return appendBytes(b, field, fn(nil))
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

// appendAnyValue writes an AnyValue.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		b = appendTag(b, 2, 0)
		if v.AsBool() {
			return append(b, 1)
		}
		return append(b, 0)
	case attribute.INT64:
		return binary.AppendUvarint(appendTag(b, 3, 0), uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return appendFixed64(b, 4, math.Float64bits(v.AsFloat64()))
	case attribute.STRINGSLICE:
		return appendMessage(b, 5, func(b []byte) []byte {
			for _, s := range v.AsStringSlice() {
				b = appendMessage(b, 1, func(b []byte) []byte { return appendBytes(b, 1, []byte(s)) })
			}
			return b
		})
	case attribute.INT64SLICE:
		return appendMessage(b, 5, func(b []byte) []byte {
			for _, n := range v.AsInt64Slice() {
				b = appendMessage(b, 1, func(b []byte) []byte { return binary.AppendUvarint(appendTag(b, 3, 0), uint64(n)) })
			}
			return b
		})
	}
	return appendBytes(b, 1, []byte(v.String()))
}

func appendKeyValues(b []byte, field int, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = appendMessage(b, field, func(b []byte) []byte {
			b = appendString(b, 1, string(kv.Key))
			return appendMessage(b, 2, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
		})
	}
	return b
}

// encodeRequest writes an ExportTraceServiceRequest of spans from one
// resource and one instrumentation scope.
func encodeRequest(resource []kv, spans []*span) []byte {
	return appendMessage(nil, 1, func(b []byte) []byte { // ResourceSpans
		b = appendMessage(b, 1, func(b []byte) []byte { // Resource
			for _, a := range resource {
				b = appendKeyValues(b, 1, []attribute.KeyValue{attribute.String(a.key, a.value)})
			}
			return b
		})
		b = appendMessage(b, 2, func(b []byte) []byte { // ScopeSpans
			b = appendMessage(b, 1, func(b []byte) []byte { // InstrumentationScope
				return appendString(b, 1, scopeName)
			})
			for _, s := range spans {
				b = appendMessage(b, 2, s.appendProto)
			}
			return appendString(b, 3, schemaURL)
		})
		return b
	})
}

func (s *span) appendProto(b []byte) []byte {
	tid, sid := s.ctx.TraceID(), s.ctx.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	b = appendString(b, 3, s.ctx.TraceState().String())
	if s.parent.IsValid() {
		b = appendBytes(b, 4, s.parent[:])
	}
	b = appendString(b, 5, s.name)
	b = appendVarint(b, 6, uint64(s.kind))
	b = appendFixed64(b, 7, unixNano(s.start))
	b = appendFixed64(b, 8, unixNano(s.end))
	b = appendKeyValues(b, 9, s.attrs)
	for _, e := range s.events {
		b = appendMessage(b, 11, func(b []byte) []byte {
			b = appendFixed64(b, 1, unixNano(e.time))
			b = appendString(b, 2, e.name)
			return appendKeyValues(b, 3, e.attrs)
		})
	}
	if s.status != 0 {
		b = appendMessage(b, 15, func(b []byte) []byte {
			b = appendString(b, 2, s.statusMsg)
			return appendVarint(b, 3, uint64(s.status))
		})
	}
	// Flags: the W3C trace flags, and whether the parent is remote
	// (SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK, _IS_REMOTE_MASK).
	flags := uint32(s.ctx.TraceFlags()) | 0x100
	if s.remoteParent {
		flags |= 0x200
	}
	return appendFixed32(b, 16, flags)
}
