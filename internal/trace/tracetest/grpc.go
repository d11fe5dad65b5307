package tracetest

import (
	"context"
	"net"
	"net/http"
	"testing"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // collectors take gzip, as OTLP asks
	"google.golang.org/grpc/metadata"
)

// StartGRPC starts an OTLP/gRPC receiver on 127.0.0.1: grpc-go's own
// server with the OpenTelemetry project's TraceService, so that a test
// checks ask's gRPC framing against the real implementation. URL is
// http://127.0.0.1:PORT, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. It stops
// when t ends.
func StartGRPC(t testing.TB) *Receiver {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{URL: "http://" + lis.Addr().String()}
	srv := grpc.NewServer()
	collectorpb.RegisterTraceServiceServer(srv, traceService{r: r})
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return r
}

type traceService struct {
	collectorpb.UnimplementedTraceServiceServer
	r *Receiver
}

func (s traceService) Export(ctx context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	h := http.Header{}
	md, _ := metadata.FromIncomingContext(ctx)
	for k, vs := range md {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	s.r.take(req.GetResourceSpans(), h)
	return &collectorpb.ExportTraceServiceResponse{}, nil
}
