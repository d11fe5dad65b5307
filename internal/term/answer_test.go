package term

import (
	"io"
	"strings"
	"testing"
)

// The text of one step runs on; the text of a later step starts after a
// blank line, or after one newline when the earlier text ended its line.
func TestAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps [][]string // the text chunks of each step
		want  string
	}{
		{"one step", [][]string{{"The answer", " is 42."}}, "The answer is 42."},
		{"narration, then the answer", [][]string{{"Let me look."}, {}, {"It is 42."}}, "Let me look.\n\nIt is 42."},
		{"narration ending its line", [][]string{{"Let me look.\n"}, {"It is 42."}}, "Let me look.\n" + "\nIt is 42."},
		{"no text at all", [][]string{{}, {""}}, ""},
	}
	for _, tt := range tests {
		var out strings.Builder
		a := NewAnswer(&out, NewStatusLine(io.Discard, false, Palette{}, 80))
		for i, chunks := range tt.steps {
			a.Step(i + 1)
			for _, c := range chunks {
				a.Text(c)
			}
		}
		if out.String() != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, out.String(), tt.want)
		}
		if a.Streamed() != (tt.want != "") {
			t.Errorf("%s: Streamed() = %v", tt.name, a.Streamed())
		}
	}
}

// On a terminal stderr the status line is cleared before the text, and
// drawn below text that did not end its line.
func TestAnswerClearsTheStatusLine(t *testing.T) {
	t.Parallel()
	var stderr, stdout strings.Builder
	status := NewStatusLine(&stderr, true, Palette{}, 80)
	a := NewAnswer(&stdout, status)
	a.Step(1)
	status.mu.Lock()
	status.draw()
	status.mu.Unlock()
	a.Text("half a line")
	if !strings.HasSuffix(stderr.String(), "\r\033[K") {
		t.Errorf("the status line was not cleared before the text: %q", stderr.String())
	}
	if !status.midLine {
		t.Error("the status line does not know the text stopped mid-line")
	}
}
