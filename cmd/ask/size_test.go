package main

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1024", 1024, true},
		{"512K", 512 << 10, true},
		{"4m", 4 << 20, true},
		{"1G", 1 << 30, true},
		{"8MiB", 8 << 20, true},
		{"2KB", 2 << 10, true},
		{" 3M ", 3 << 20, true},
		{"", 0, false},
		{"M", 0, false},
		{"-1", 0, false},
		{"1.5M", 0, false},
		{"1T", 0, false},
		{"9999999999999G", 0, false},
	} {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestFormatSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0 bytes", 10: "10 bytes", 1 << 20: "1M", 3 << 30: "3G", 1536: "1.5K", 512 << 10: "512K"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzParseSize: a size is never negative, and one shown in whole units
// reads back as itself.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1M", "512K", "0", "-1", "9G", "1kib", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseSize(%q) = %d", s, n)
		}
		shown := formatSize(n)
		if strings.ContainsAny(shown, ". ") {
			return
		}
		if back, err := parseSize(shown); err != nil || back != n {
			t.Fatalf("parseSize(%q) = %d, shown %q, which reads %d, %v", s, n, shown, back, err)
		}
	})
}
