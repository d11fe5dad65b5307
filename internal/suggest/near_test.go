package suggest

import "testing"

func TestNear(t *testing.T) {
	t.Parallel()
	names := []string{"q", "v", "mode", "model", "timeout", "json", "no-stdin"}
	for _, tc := range []struct {
		word, want string
	}{
		{"timout", "timeout"},   // one edit
		{"tiemuot", "timeout"},  // two swaps: two edits, under half of seven
		{"modle", "model"},      // one edit from both: the swap, model's own letters, wins (issue 38, P3)
		{"mdoe", "mode"},        // a swap from mode, more from model
		{"jsno", "json"},        // a swap is one edit, under half of four
		{"jn", ""},              // two edits from json: half of it
		{"x", ""},               // one letter names are never suggested
		{"no-stdn", "no-stdin"}, // a letter left out
		{"frobnicate", ""},      // nothing near
	} {
		if got := Near(tc.word, names); got != tc.want {
			t.Errorf("Near(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}
