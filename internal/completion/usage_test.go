package completion

import (
	"strings"
	"testing"
)

func TestUsageForMenus(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		usage, placeholder, menu string
	}{
		{"write the events to `FILE`", "FILE", "write the events to FILE"},
		{"the directory the tools work in (default: .)", "", "the directory the tools work in"},
		{"stop after `N` steps (default: the mode's) and say so", "N", "stop after N steps and say so"},
		{"an unclosed `quote", "", "an unclosed quote"},
		{"print JSON", "", "print JSON"},
	} {
		if got := Placeholder(tt.usage); got != tt.placeholder {
			t.Errorf("Placeholder(%q) = %q, want %q", tt.usage, got, tt.placeholder)
		}
		if got := MenuUsage(tt.usage); got != tt.menu {
			t.Errorf("MenuUsage(%q) = %q, want %q", tt.usage, got, tt.menu)
		}
	}
	// Cut at 80 runes, with "…" where it was cut.
	long := MenuUsage(strings.Repeat("word\n", 40))
	if len([]rune(long)) != 81 || !strings.HasSuffix(long, "…") || strings.Contains(long, "\n") {
		t.Errorf("a long usage is not one short line: %q", long)
	}
}
