package providers

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// crashingProtocol is a protocol whose parsers panic, as the text tool
// protocol's once did on a reply it did not expect.
type crashingProtocol struct{ echoProtocol }

func (crashingProtocol) ParseResponse([]byte) (*Turn, error) {
	var calls []ToolCall
	_ = calls[3] // index out of range
	return nil, nil
}

func (crashingProtocol) NewStream() Stream { return &crashingStream{} }

type crashingStream struct{ echoStream }

func (*crashingStream) Add(Event) (string, error) { panic("unexpected event") }

// A parser's panic on a provider's bytes is a malformed response, an error
// the CLI maps to exit 3, not a crash with a stack trace.
func TestParserPanicIsMalformed(t *testing.T) {
	document, _ := serve(t, ok("hello"))
	sse, _ := serve(t, status(200, map[string]string{"Content-Type": "text/event-stream"}, "data: hello\n\n"))
	for _, stream := range []bool{false, true} {
		srv := document
		if stream {
			srv = sse
		}
		c := &Caller{Provider: "fake", Protocol: crashingProtocol{}, BaseURL: srv.URL, HTTP: srv.Client()}
		turn, err := c.Call(context.Background(), Request{Stream: stream}, Hooks{})
		if turn != nil || !errors.Is(err, ErrMalformed) {
			t.Fatalf("stream %v: %v, %v; want an error wrapping ErrMalformed", stream, turn, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "echo") || !strings.Contains(msg, "could not be parsed") || strings.Contains(msg, "goroutine") {
			t.Errorf("stream %v: error %q should name the protocol, say the response could not be parsed, and hold no stack trace", stream, msg)
		}
	}

	if _, err := ParseBody(crashingProtocol{}, []byte(`{"text":"hello"}`)); !errors.Is(err, ErrMalformed) {
		t.Errorf("ParseBody of a document: %v", err)
	}
	if _, err := ParseBody(crashingProtocol{}, []byte("data: hello\n\n")); !errors.Is(err, ErrMalformed) {
		t.Errorf("ParseBody of a stream: %v", err)
	}
	if _, err := ReadStream(strings.NewReader("data: hello\n\n"), SSE, &crashingStream{}, nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("ReadStream: %v", err)
	}
}
