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
		{"modle", "mode"},       // a swap from model, a swap and more from mode: the first of the nearest
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
