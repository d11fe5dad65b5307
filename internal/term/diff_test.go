package term

import (
	"strings"
	"testing"
)

// A write over a file is shown as the change it makes: every removed and
// added line, a few kept lines around them, hunks apart when far apart.
func TestWriteChange(t *testing.T) {
	t.Parallel()
	ten := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	tests := []struct {
		name, before, after string
		want                string
	}{
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n",
			"change to the file it replaces (3 lines):\n  @@ -1,3 +1,3 @@\n    a\n  - b\n  + B\n    c\n"},
		{"a line added at the end", "a\n", "a\nb\n",
			"change to the file it replaces (1 line):\n  @@ -1,1 +1,2 @@\n    a\n  + b\n"},
		{"far apart changes are two hunks", ten, strings.Replace(strings.Replace(ten, "2\n", "two\n", 1), "9\n", "nine\n", 1),
			"change to the file it replaces (10 lines):\n  @@ -1,4 +1,4 @@\n    1\n  - 2\n  + two\n    3\n    4\n" +
				"  @@ -7,4 +7,4 @@\n    7\n    8\n  - 9\n  + nine\n    10\n"},
		{"everything replaced", "old\n", "new\nlines\n",
			"change to the file it replaces (1 line):\n  @@ -1,1 +1,2 @@\n  - old\n  + new\n  + lines\n"},
		{"emptied", "a\nb\n", "", "change to the file it replaces (2 lines):\n  @@ -1,2 +1,0 @@\n  - a\n  - b\n"},
		{"the same content", "a\n", "a\n", "change: none, the file already holds this content\n"},
		{"only the last newline", "a\n", "a", "change: the last newline only (the new content has no newline at its end)\n"},
		{"escaped", "a\n", "a\x1b[2J\n", "change to the file it replaces (1 line):\n  @@ -1,1 +1,1 @@\n  - a\n  + a\\u001b[2J\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		writeChange(&b, "", tt.before, tt.after)
		if b.String() != tt.want {
			t.Errorf("%s:\n%s\nwant\n%s", tt.name, b.String(), tt.want)
		}
	}
}

// The diff is a shortest one: kept lines are never shown as removed and
// added again.
func TestLineDiffKeepsCommonLines(t *testing.T) {
	t.Parallel()
	a := strings.Split("x a b c y d", " ")
	b := strings.Split("a b z c d w", " ")
	var removed, added []string
	for _, l := range lineDiff(a, b) {
		switch l.op {
		case '-':
			removed = append(removed, l.text)
		case '+':
			added = append(added, l.text)
		}
	}
	if strings.Join(removed, " ") != "x y" || strings.Join(added, " ") != "z w" {
		t.Errorf("removed %q, added %q; want x y, z w", removed, added)
	}
}
