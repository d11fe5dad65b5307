package term

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/records"
)

func TestCallLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   string
		end    records.Event
		width  int
		want   string
		failed bool
	}{
		{"a command that failed", `{"command":"go test ./..."}`,
			records.Event{Name: "shell", Content: "exit code: 1\nstdout:\nFAIL", DurationMS: 800}, 80,
			"· shell go test ./... (exit 1, 0.8s)", true},
		{"a command that passed", `{"command":"go vet ./..."}`,
			records.Event{Name: "shell", Content: "exit code: 0\nstdout: (empty)", DurationMS: 1200}, 80,
			"· shell go vet ./... (exit 0, 1.2s)", false},
		{"a file tool", `{"path":"go.mod"}`,
			records.Event{Name: "read_file", Content: "1: module x", DurationMS: 3}, 80,
			"· read_file go.mod (0.0s)", false},
		{"an error result", `{"path":"nope"}`,
			records.Event{Name: "read_file", Content: "read_file: \"nope\" does not exist\nmore", IsError: true, DurationMS: 1}, 80,
			`· read_file nope (failed: read_file: "nope" does not exist …, 0.0s)`, true},
		{"a narrow terminal", `{"command":"` + strings.Repeat("x", 200) + `"}`,
			records.Event{Name: "shell", Content: "exit code: 0", DurationMS: 0}, 40,
			"· shell " + strings.Repeat("x", 15) + "… (exit 0, 0.0s)", false},
		{"text a model wrote cannot redraw the screen", `{"command":"echo \u001b[2J"}`,
			records.Event{Name: "shell", Content: "exit code: 0", DurationMS: 0}, 80,
			`· shell echo \u001b[2J (exit 0, 0.0s)`, false},
	}
	for _, tt := range tests {
		c := NewCalls()
		c.Line(records.Event{Type: records.TypeToolStarted, ID: "c1", Name: tt.end.Name, Arguments: tt.args}, tt.width)
		tt.end.Type, tt.end.ID = records.TypeToolFinished, "c1"
		got, failed := c.Line(tt.end, tt.width)
		if got != tt.want || failed != tt.failed {
			t.Errorf("%s: %q (failed %v), want %q (failed %v)", tt.name, got, failed, tt.want, tt.failed)
		}
		if n := len([]rune(got)); n >= tt.width {
			t.Errorf("%s: %d columns, wider than the terminal's %d", tt.name, n, tt.width)
		}
	}
}
