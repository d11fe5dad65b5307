package loop_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ask-cli/ask/internal/loop"
)

func TestCut(t *testing.T) {
	t.Parallel()
	lines := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "line %03d of the output\n", i)
		}
		return b.String()
	}
	long := lines(200) // 200 lines of 23 bytes
	for _, tc := range []struct {
		name       string
		content    string
		keep       int
		head, tail string // what the cut keeps at each end, whole
		left       string // what it leaves out, whole
	}{
		{name: "short enough stays", content: "ok\n", keep: 10, head: "ok\n"},
		{name: "exactly keep stays", content: long, keep: len(long), head: long},
		{name: "cut at line ends", content: long, keep: 1000,
			head: "line 000 of the output\n", tail: "line 199 of the output\n", left: "line 100 of the output\n"},
		{name: "one long line", content: strings.Repeat("x", 5000), keep: 600, head: strings.Repeat("x", 300), tail: strings.Repeat("x", 300)},
		{name: "never inside a character", content: strings.Repeat("é", 3000), keep: 999, head: "é", tail: "é"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := loop.Cut(tc.content, tc.keep, 8000)
			if len(tc.content) <= tc.keep {
				if got != tc.content {
					t.Fatalf("Cut changed content no longer than keep")
				}
				return
			}
			note := "bytes here to fit the model's 8000-token context window; the run's transcript keeps it whole."
			if !strings.Contains(got, note) || !strings.Contains(got, fmt.Sprintf("of this result's %d bytes", len(tc.content))) {
				t.Errorf("no note saying what was cut:\n%s", got)
			}
			head, tail, ok := strings.Cut(got, "\n[ask cut ")
			if !ok {
				t.Fatalf("no cut line in %q", got)
			}
			tail = tail[strings.Index(tail, "]\n")+2:]
			if !strings.HasPrefix(tc.content, head) || !strings.HasSuffix(tc.content, tail) {
				t.Errorf("head or tail is not the content's own")
			}
			if !strings.HasPrefix(head, tc.head) || !strings.HasSuffix(tail, tc.tail) {
				t.Errorf("head %q… tail …%q, want them to keep %q and %q", head[:min(40, len(head))], tail[max(0, len(tail)-40):], tc.head, tc.tail)
			}
			if tc.left != "" && strings.Contains(got, tc.left) {
				t.Errorf("the middle %q is still there", tc.left)
			}
			if strings.Count(tc.content, "\n") > 1 && (!strings.HasSuffix(head, "\n") || len(tail) > 0 && !strings.HasSuffix(tc.content[:len(tc.content)-len(tail)], "\n")) {
				t.Errorf("a cut falls inside a line: head ends %q", head[max(0, len(head)-10):])
			}
			if !utf8.ValidString(head) || !utf8.ValidString(tail) {
				t.Errorf("a cut falls inside a character")
			}
			left := fmt.Sprintf("[ask cut %d of", len(tc.content)-len(head)-len(tail))
			if !strings.Contains(got, left) {
				t.Errorf("the note miscounts what was left out: want %q in\n%s", left, got)
			}
			if kept := len(head) + len(tail); kept > tc.keep || kept < tc.keep/2 {
				t.Errorf("kept %d bytes of the content, want about %d", kept, tc.keep)
			}
		})
	}
}
