package bytesize

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
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
		got, err := Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0 bytes", 10: "10 bytes", 1 << 20: "1M", 3 << 30: "3G", 1536: "1.5K", 512 << 10: "512K"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzParse: a size is never negative, and one shown in whole units
// reads back as itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1M", "512K", "0", "-1", "9G", "1kib", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("Parse(%q) = %d", s, n)
		}
		shown := Format(n)
		if strings.ContainsAny(shown, ". ") {
			return
		}
		if back, err := Parse(shown); err != nil || back != n {
			t.Fatalf("Parse(%q) = %d, shown %q, which reads %d, %v", s, n, shown, back, err)
		}
	})
}
