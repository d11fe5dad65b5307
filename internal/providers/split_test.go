package providers_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// randomReader returns the body in pieces of random size, as a network
// might: a split inside an SSE line, a CRLF, a multi-byte character.
type randomReader struct {
	b   []byte
	rng *rand.Rand
}

func (r *randomReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.b), 1+r.rng.IntN(97))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

// TestRecordedStreamsSplitAtRandom reads every recorded stream of the five
// protocols in pieces split at random points, many times over, and checks
// that each read gives the turn one whole read does.
func TestRecordedStreamsSplitAtRandom(t *testing.T) {
	t.Parallel()
	sets := []struct {
		protocol string
		pattern  string
		framing  providers.Framing
	}{
		{"openai", "openai/testdata/*/*.sse", providers.SSE},
		{"responses", "responses/testdata/*.sse", providers.SSE},
		{"anthropic", "anthropic/testdata/*.sse", providers.SSE},
		{"gemini", "gemini/testdata/*.sse", providers.SSE},
		{"ollama", "ollama/testdata/*.ndjson", providers.NDJSON},
	}
	rng := rand.New(rand.NewPCG(17, 2026))
	for _, set := range sets {
		files, err := filepath.Glob(set.pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no recorded streams (%v)", set.pattern, err)
		}
		p, err := catalog.NewProtocol(set.protocol)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			whole, errWhole := providers.ReadStream(bytes.NewReader(body), set.framing, p.NewStream(), nil)
			for range 25 {
				split, errSplit := providers.ReadStream(&randomReader{b: body, rng: rng}, set.framing, p.NewStream(), nil)
				if (errWhole == nil) != (errSplit == nil) {
					t.Fatalf("%s: whole read error %v, split read error %v", file, errWhole, errSplit)
				}
				if errWhole != nil {
					break
				}
				if !slices.Equal(whole.Calls, split.Calls) || whole.Text != split.Text || whole.Reasoning != split.Reasoning ||
					!bytes.Equal(join(whole.Messages), join(split.Messages)) {
					t.Fatalf("%s: a split read differs from the whole read:\n%+v\n%+v", file, whole, split)
				}
			}
		}
	}
}

func join(msgs []json.RawMessage) []byte { return bytes.Join(asBytes(msgs), []byte("\n")) }

func asBytes(msgs []json.RawMessage) [][]byte {
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = m
	}
	return out
}
