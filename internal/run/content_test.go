package run

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/tools"
)

// A run records a file's content before only at its first change, and
// only hashes once its changes have recorded maxRunContent.
func TestContentBudget(t *testing.T) {
	t.Parallel()
	b := contentBudget{seen: map[string]bool{}}
	change := func(path, before, after string) tools.Change {
		return tools.Change{Path: path, Before: []byte(before), HasBefore: before != "", After: []byte(after), HasAfter: true, AfterSHA256: "h"}
	}
	first := b.of(change("a", "1", "2"))
	if got, ok := first.BeforeBytes(); !ok || string(got) != "1" {
		t.Errorf("first change: before %q %v", got, ok)
	}
	again := b.of(change("a", "2", "3"))
	if _, ok := again.BeforeBytes(); ok {
		t.Error("a second change of a file records its content before again")
	}
	if got, _ := again.AfterBytes(); string(got) != "3" {
		t.Errorf("second change: after %q", got)
	}
	big := strings.Repeat("x", maxRunContent/2)
	b.of(change("b", big, "y"))
	over := b.of(change("c", big, big))
	if _, ok := over.BeforeBytes(); ok || over.Omitted == "" || over.AfterSHA256 != "h" {
		t.Errorf("past the budget: %+v, want the hash alone and why", over)
	}
}
