package ollama

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// seeds are every recorded reply: the streams and the single objects.
func seeds(f *testing.F) [][]byte {
	var out [][]byte
	for _, suffix := range []string{".ndjson", ".json"} {
		for _, name := range providertest.Fixtures(f, suffix) {
			if !strings.HasSuffix(name, ".request.json") {
				out = append(out, providertest.Read(f, name))
			}
		}
	}
	return out
}

// FuzzStream feeds a recorded body, cut short at cut (0 keeps it whole), with
// a line break forced in at split (0 adds none), through the NDJSON reader in
// reads of chunk bytes. It must not panic, may fail only in the ways the
// contract names, and whatever turn comes out must be usable.
func FuzzStream(f *testing.F) {
	for _, body := range seeds(f) {
		f.Add(body, uint16(0), uint16(0), uint8(0))
		f.Add(body, uint16(len(body)/2), uint16(0), uint8(7))
		f.Add(body, uint16(0), uint16(len(body)/3), uint8(255))
	}
	f.Fuzz(func(t *testing.T, body []byte, cut, split uint16, chunk uint8) {
		if cut > 0 && int(cut) < len(body) {
			body = body[:cut]
		}
		if split > 0 && int(split) < len(body) {
			body = bytes.Join([][]byte{body[:split], body[split:]}, []byte("\n"))
		}
		r := &chunkReader{data: body, n: int(chunk) + 1}
		var shown strings.Builder
		turn, err := providers.ReadStream(r, providers.NDJSON, New().NewStream(), func(d string) { shown.WriteString(d) })
		if err != nil {
			if !expectedError(err) {
				t.Fatalf("unexpected kind of error: %T %v", err, err)
			}
			return
		}
		checkTurn(t, turn)
		if shown.String() != turn.Text {
			t.Errorf("shown %q, Text %q", shown.String(), turn.Text)
		}
	})
}

// FuzzParseResponse feeds a recorded body, cut short at cut, to
// ParseResponse and to ParseToolCalls (which also takes whole streams).
func FuzzParseResponse(f *testing.F) {
	for _, body := range seeds(f) {
		f.Add(body, uint16(0))
		f.Add(body, uint16(len(body)-2))
	}
	f.Fuzz(func(t *testing.T, body []byte, cut uint16) {
		if cut > 0 && int(cut) < len(body) {
			body = body[:cut]
		}
		p := New()
		turn, err := p.ParseResponse(body)
		if err != nil {
			if !expectedError(err) {
				t.Fatalf("ParseResponse: unexpected kind of error: %T %v", err, err)
			}
		} else {
			checkTurn(t, turn)
		}
		calls, err := p.ParseToolCalls(body)
		if err != nil {
			if !expectedError(err) {
				t.Fatalf("ParseToolCalls: unexpected kind of error: %T %v", err, err)
			}
			return
		}
		for i, c := range calls {
			if c.Name == "" || c.ID == "" {
				t.Errorf("call %d: name %q id %q, want both non-empty", i, c.Name, c.ID)
			}
		}
	})
}
