package main

import "testing"

func TestEditDistance(t *testing.T) {
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
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}
