package suggest

import "testing"

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"tools", "tools", 0},
		{"tool", "tools", 1},
		{"replya", "replay", 1},
		{"hepl", "help", 1},
		{"confg", "config", 1},
		{"dog", "log", 1},
		{"provder", "provider", 1},
		{"sandbx", "sandbox", 1},
		{"abc", "cba", 2},
		{"", "log", 3},
		{"wörd", "word", 1},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	t.Parallel()
	names := []string{"mode", "model", "max_steps", "max_tokens"}
	for _, tc := range []struct {
		word     string
		maxEdits int
		want     string
	}{
		{"model", 2, "model"},           // itself
		{"max_tokesn", 1, "max_tokens"}, // a swap is one edit
		{"mdoe", 1, "mode"},             // the nearer of two within reach
		{"max_token", 2, "max_tokens"},
		{"timeout", 2, ""},    // nothing near
		{"mod", 0, ""},        // not within 0
		{"modes", 1, "mode"},  // tie with model at 1, neither a swap: the first
		{"modle", 1, "model"}, // tie with mode at 1: the swap of model's letters
	} {
		if got := Nearest(tc.word, names, tc.maxEdits); got != tc.want {
			t.Errorf("Nearest(%q, %d) = %q, want %q", tc.word, tc.maxEdits, got, tc.want)
		}
	}
}
