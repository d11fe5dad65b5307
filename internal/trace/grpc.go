package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// grpcExportPath is OTLP/gRPC's one method for traces:
// opentelemetry.proto.collector.trace.v1.TraceService/Export.
const grpcExportPath = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// postGRPC sends one ExportTraceServiceRequest as a unary gRPC call over
// net/http's HTTP/2: a length-prefixed message, and the answer in the
// grpc-status trailer. It is written here rather than taken from the
// OpenTelemetry SDK's otlptracegrpc: grpc-go's packages, linked in, would
// cost every start of ask (traced or not) some 80 package inits, 230 KB
// and 1,600 allocations, past its init budget (cmd/ask TestInitBudget).
// The tests check it against grpc-go's own server.
func (e *exporter) postGRPC(ctx context.Context, msg []byte) error {
	flag := byte(0)
	if e.cfg.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(msg)
		_ = zw.Close()
		msg, flag = buf.Bytes(), 1
	}
	frame := make([]byte, 5, 5+len(msg))
	frame[0] = flag
	binary.BigEndian.PutUint32(frame[1:], uint32(len(msg)))
	frame = append(frame, msg...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.url, bytes.NewReader(frame))
	if err != nil {
		return fmt.Errorf("send traces: %w", err)
	}
	for k, v := range e.cfg.headers {
		req.Header.Set(k, v) // gRPC metadata: HTTP/2 sends names in lower case
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	req.Header.Set("User-Agent", "ask OTLP/gRPC exporter")
	if flag == 1 {
		req.Header.Set("Grpc-Encoding", "gzip")
	}
	if d, ok := ctx.Deadline(); ok {
		if ms := time.Until(d).Milliseconds(); ms > 0 {
			req.Header.Set("Grpc-Timeout", fmt.Sprintf("%dm", ms))
		}
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("send traces: %w", err)
	}
	defer resp.Body.Close()
	// The trailers come after the body.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("send traces to %s: %s", e.cfg.url, resp.Status)
	}
	status := cmpHeader(resp, "Grpc-Status")
	if status != "0" {
		m, _ := url.PathUnescape(cmpHeader(resp, "Grpc-Message"))
		return fmt.Errorf("send traces to %s: gRPC status %s: %s", e.cfg.url, strings.TrimSpace(status), m)
	}
	return nil
}

// cmpHeader is a gRPC field from the trailers, or from the headers of a
// trailers-only answer (an error answered at once).
func cmpHeader(resp *http.Response, name string) string {
	if v := resp.Trailer.Get(name); v != "" {
		return v
	}
	return resp.Header.Get(name)
}
