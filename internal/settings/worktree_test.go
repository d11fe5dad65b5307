package settings

import "testing"

// A lower layer may give a worktree where the command line has none, or
// name the fresh one it asked for; it may not take the command line's
// away or trade a named one for another.
func TestWorktreeOnlyNarrows(t *testing.T) {
	t.Parallel()
	r, _ := Lookup("worktree")
	tests := []struct {
		lower string
		upper any
		wide  bool
	}{
		{"fix", "", false},
		{"fix", "auto", false},
		{"fix", "fix", false},
		{"auto", "", false},
		{"", "auto", true},
		{"", "fix", true},
		{"other", "fix", true},
		{"fix", nil, false}, // after the prompt: the command line's is not known
	}
	for _, tt := range tests {
		if got := r.WidensOver(tt.lower, tt.upper) != ""; got != tt.wide {
			t.Errorf("worktree %q over %v: widens %t, want %t", tt.lower, tt.upper, got, tt.wide)
		}
	}
}
