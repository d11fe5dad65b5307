package history

import (
	"slices"
	"testing"
)

func TestNest(t *testing.T) {
	t.Parallel()
	// Newest first, as List gives them: p2's children started after it.
	runs := []Entry{
		{ID: "p2c2", ParentID: "p2"}, {ID: "p2c1", ParentID: "p2"}, {ID: "p2"},
		{ID: "orphan", ParentID: "gone"}, {ID: "p1c1", ParentID: "p1"}, {ID: "p1"},
		{ID: "self", ParentID: "self"},
	}
	var got []string
	for _, e := range Nest(runs) {
		got = append(got, e.ID+":"+string(rune('0'+e.Depth)))
	}
	want := []string{"p2:0", "p2c1:1", "p2c2:1", "orphan:0", "p1:0", "p1c1:1", "self:0"}
	if !slices.Equal(got, want) {
		t.Errorf("Nest = %q, want %q", got, want)
	}
}
