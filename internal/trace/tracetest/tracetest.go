// Package tracetest is an OTLP/HTTP trace receiver for tests: it decodes
// what ask sends with the OpenTelemetry project's generated protobuf
// packages, so that a test checks the encoding against the official
// definitions as well as the spans. Only tests import it: the generated
// packages' init work stays out of ask.
package tracetest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	common "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// take keeps the spans of one export, and the headers it came with.
func (r *Receiver) take(resourceSpans []*tracepb.ResourceSpans, headers http.Header) {
	var got []Span
	for _, rs := range resourceSpans {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(), Kind: int32(s.GetKind()),
					StartNano: s.GetStartTimeUnixNano(), EndNano: s.GetEndTimeUnixNano(), Attrs: attrs(s.GetAttributes()),
					StatusCode: int32(s.GetStatus().GetCode()), StatusMessage: s.GetStatus().GetMessage(),
					Resource: res, Raw: s.String(),
				}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, e.GetName())
					sp.Raw += e.String()
				}
				got = append(got, sp)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.headers = append(r.headers, headers)
	r.mu.Unlock()
}

// Span is one received span, flattened for assertions.
type Span struct {
	TraceID, SpanID, ParentID string // hex
	Name                      string
	Kind                      int32
	StartNano, EndNano        uint64
	Attrs                     map[string]any // string, bool, int64, float64, []any
	Events                    []string       // names
	StatusCode                int32
	StatusMessage             string
	Resource                  map[string]any
	// Raw is the span's protobuf text, for "never in any field" checks.
	Raw string
}

// Receiver collects the spans posted to URL + "/v1/traces".
type Receiver struct {
	URL string // base, as OTEL_EXPORTER_OTLP_ENDPOINT takes it
	srv *httptest.Server

	mu      sync.Mutex
	spans   []Span
	headers []http.Header
	errs    []string
}

// Start starts a receiver, closed when t ends.
func Start(t testing.TB) *Receiver {
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL
	t.Cleanup(r.srv.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	fail := func(format string, args ...any) {
		r.mu.Lock()
		r.errs = append(r.errs, fmt.Sprintf(format, args...))
		r.mu.Unlock()
		http.Error(w, fmt.Sprintf(format, args...), http.StatusBadRequest)
	}
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		fail("%s %s, want POST /v1/traces", req.Method, req.URL.Path)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		fail("Content-Type %q", ct)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			fail("gzip: %v", err)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		fail("read: %v", err)
		return
	}
	// An ExportTraceServiceRequest is a TracesData on the wire (field 1,
	// the resource spans).
	var msg tracepb.TracesData
	if err := proto.Unmarshal(b, &msg); err != nil {
		fail("decode: %v", err)
		return
	}
	r.take(msg.GetResourceSpans(), req.Header.Clone())
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func attrs(kvs []*common.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		out[kv.GetKey()] = value(kv.GetValue())
	}
	return out
}

func value(v *common.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *common.AnyValue_StringValue:
		return x.StringValue
	case *common.AnyValue_BoolValue:
		return x.BoolValue
	case *common.AnyValue_IntValue:
		return x.IntValue
	case *common.AnyValue_DoubleValue:
		return x.DoubleValue
	case *common.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}

// Spans are the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Headers are the headers of the requests received so far.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Errors are the requests the receiver refused, and why.
func (r *Receiver) Errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// Named returns the spans whose name starts with prefix.
func Named(spans []Span, prefix string) []Span {
	var out []Span
	for _, s := range spans {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}
