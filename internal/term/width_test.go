package term

import "testing"

func TestColumns(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		kernel  func() int
		columns string
		want    int
	}{
		{"the kernel's", func() int { return 120 }, "100", 120},
		{"no terminal: $COLUMNS", func() int { return 0 }, "100", 100},
		{"no kernel: $COLUMNS", nil, "100", 100},
		{"too narrow to be one", func() int { return 20 }, "15", 80},
		{"nothing known", nil, "", 80},
		{"$COLUMNS not a number", nil, "wide", 80},
	} {
		getenv := func(k string) string {
			if k == "COLUMNS" {
				return tt.columns
			}
			return ""
		}
		if got := Columns(tt.kernel, getenv); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}
