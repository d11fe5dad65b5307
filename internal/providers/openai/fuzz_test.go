package openai

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/tidwall/gjson"
)

// FuzzParse feeds recorded bodies, truncated at a random point, to the
// response parser and to the stream accumulator, the stream both whole and
// in small reads. Invariants: no panic; every call that comes out has a
// name and an id, and its echo carries the same id; reading a stream in
// pieces gives the same turn as reading it at once.
func FuzzParse(f *testing.F) {
	for _, name := range responseFixtures(f) {
		body, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, uint32(len(body)), uint8(7))
		f.Add(body, uint32(len(body)/2), uint8(1))
	}
	f.Fuzz(func(t *testing.T, body []byte, cut uint32, piece uint8) {
		if int(cut) < len(body) {
			body = body[:cut]
		}
		p := New()
		if turn, err := providers.ParseBody(p, body); err == nil {
			checkTurn(t, turn)
		}
		if turn, err := p.ParseResponse(body); err == nil {
			checkTurn(t, turn)
		}
		whole, errWhole := providers.ReadStream(bytes.NewReader(body), providers.SSE, p.NewStream(), nil)
		split, errSplit := providers.ReadStream(&smallReader{b: body, n: int(piece)%61 + 1}, providers.SSE, p.NewStream(), nil)
		if (errWhole == nil) != (errSplit == nil) {
			t.Fatalf("whole read error %v; split read error %v", errWhole, errSplit)
		}
		if errWhole != nil {
			return
		}
		checkTurn(t, whole)
		checkTurn(t, split)
		if !slices.Equal(whole.Calls, split.Calls) || !bytes.Equal(whole.Messages[0], split.Messages[0]) || whole.Text != split.Text {
			t.Fatalf("split read differs:\n%+v\n%+v", whole, split)
		}
	})
}

func checkTurn(t *testing.T, turn *providers.Turn) {
	t.Helper()
	if len(turn.Messages) != 1 || !gjson.ValidBytes(turn.Messages[0]) {
		t.Fatalf("echo is not one JSON message: %q", turn.Messages)
	}
	echoed := gjson.GetBytes(turn.Messages[0], "tool_calls").Array()
	if len(echoed) != len(turn.Calls) {
		t.Fatalf("echo has %d calls; turn has %d", len(echoed), len(turn.Calls))
	}
	for i, c := range turn.Calls {
		if c.ID == "" || c.Name == "" || c.Arguments == "" {
			t.Fatalf("call %d has an empty field: %+v", i, c)
		}
		if id := echoed[i].Get("id").String(); id != c.ID {
			t.Fatalf("echoed call %d id %q; want %q", i, id, c.ID)
		}
	}
}

// smallReader returns at most n bytes per Read.
type smallReader struct {
	b []byte
	n int
}

func (r *smallReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n, len(r.b))
	copy(p, r.b[:k])
	r.b = r.b[k:]
	return k, nil
}
