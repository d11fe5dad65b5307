package tools

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// TestHeadTail writes data in random chunks and compares what is kept with
// the head and tail cut from the whole data.
func TestHeadTail(t *testing.T) {
	tests := []struct{ size, head, tail int }{
		{0, 4, 8},
		{3, 4, 8},
		{12, 4, 8}, // exactly head+tail: nothing dropped
		{13, 4, 8},
		{100, 4, 8},
		{5000, 100, 300},
		{5000, 0, 300},
		{5000, 100, 0},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range tests {
		data := make([]byte, tt.size)
		for i := range data {
			data[i] = 'a' + byte(i%26)
		}
		for trial := range 20 {
			t.Run(fmt.Sprintf("%d-%d-%d/%d", tt.size, tt.head, tt.tail, trial), func(t *testing.T) {
				w := newHeadTail(tt.head, tt.tail)
				for rest := data; len(rest) > 0; {
					n := min(len(rest), 1+rng.IntN(2*(tt.tail+1)))
					if _, err := w.Write(rest[:n]); err != nil {
						t.Fatal(err)
					}
					rest = rest[n:]
				}
				want := string(data)
				if tt.size > tt.head+tt.tail {
					want = fmt.Sprintf("%s\n[... %d bytes dropped; %d bytes in all; only the first %d and last %d are shown ...]\n%s",
						data[:tt.head], tt.size-tt.head-tt.tail, tt.size, tt.head, tt.tail, data[tt.size-tt.tail:])
				}
				if got := w.String(); got != want {
					t.Errorf("String() = %q, want %q", got, want)
				}
				if w.total != int64(tt.size) {
					t.Errorf("total = %d, want %d", w.total, tt.size)
				}
				if len(w.head) > tt.head || len(w.ring) > tt.tail {
					t.Errorf("kept %d+%d bytes, caps %d+%d", len(w.head), len(w.ring), tt.head, tt.tail)
				}
			})
		}
	}
}

func TestHeadTailKeepsValidUTF8(t *testing.T) {
	w := newHeadTail(4, 4)
	w.Write(bytes.Repeat([]byte("é"), 20)) // the cuts split two-byte runes
	got := w.String()
	if !utf8.ValidString(got) {
		t.Errorf("String() = %q is not valid UTF-8", got)
	}
}
