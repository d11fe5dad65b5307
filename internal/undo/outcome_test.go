package undo

import "testing"

func TestOutcomeLines(t *testing.T) {
	t.Parallel()
	outcomes := []Outcome{
		{Path: "notes.txt", Action: "restored"},
		{Path: "new.go", Action: "removed"},
		{Path: "app.go", Action: "left", Reason: "it has changed since the run"},
		{Path: "evil\x1b[2J.txt", Action: "left", Reason: "gone\a"},
	}
	want := []string{
		"restored notes.txt",
		"removed new.go",
		"left app.go: it has changed since the run",
		`left evil\u001b[2J.txt: gone\u0007`,
	}
	for i, o := range outcomes {
		if got := o.String(); got != want[i] {
			t.Errorf("%+v: %q, want %q", o, got, want[i])
		}
	}
	if n := Left(outcomes); n != 2 {
		t.Errorf("Left = %d, want 2", n)
	}
	if n := Left(nil); n != 0 {
		t.Errorf("Left(nil) = %d, want 0", n)
	}
}
