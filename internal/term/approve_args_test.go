package term

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

// TestQuestionShowsEveryArgument attacks the approval question (issue 29,
// M8) with calls whose danger is in an argument besides the main one: a
// write into .git/config whose content sets core.fsmonitor, an edit, a
// tool with several arguments, escape sequences that would redraw the
// question. The real file tools and the policy build the question; the
// person answers no, and must have seen every argument, escaped.
func TestQuestionShowsEveryArgument(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := tools.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := append(tools.Builtins(root),
		approvalTool{tools.Info{Name: "deploy", Risk: tools.Exec, RequiresApproval: true}})
	args := func(m map[string]any) string {
		b, _ := json.Marshal(m)
		return string(b)
	}
	tests := []struct {
		name, tool, arguments string
		want                  []string // each must be shown
	}{
		{"a .git/config write shows its content", "write_file",
			args(map[string]any{"path": ".git/config", "content": "[core]\n\tfsmonitor = \"touch PWN\"\n"}),
			[]string{".git/config", "content (2 lines):", "| [core]", `| \tfsmonitor = "touch PWN"`}},
		{"an edit shows both texts", "edit_file",
			args(map[string]any{"path": ".git/config", "old_text": "[core]", "new_text": "[core]\n\thooksPath = /tmp/evil"}),
			[]string{"old_text: [core]", "new_text (2 lines):", `| \thooksPath = /tmp/evil`, "change:\n    - [core]\n    + [core]\n    + \\thooksPath = /tmp/evil\n"}},
		{"an overwrite shows its diff against the file", "write_file",
			args(map[string]any{"path": "notes.txt", "content": "one\n2\x1b[2J\nthree\n"}),
			[]string{"change to the file it replaces (3 lines):\n    @@ -1,3 +1,3 @@\n      one\n    - two\n    + 2\\u001b[2J\n      three\n",
				"[a]lways any edit inside the working directory: "}},
		{"a new file shows its content", "write_file",
			args(map[string]any{"path": "new.txt", "content": "hello\nworld\n"}),
			[]string{"content (2 lines):\n    | hello\n    | world\n"}},
		{"an edit offers always for edits", "edit_file",
			args(map[string]any{"path": "notes.txt", "old_text": "two", "new_text": "2"}),
			[]string{"change:\n    - two\n    + 2\n", "[a]lways any edit inside the working directory: "}},
		{"a tool's other arguments", "deploy",
			args(map[string]any{"url": "https://ok.example", "target": "prod", "force": true, "extra": map[string]any{"wipe": "all"}}),
			[]string{"https://ok.example", "target: prod", "force: true", `extra: {"wipe":"all"}`}},
		{"escape sequences are shown, not run", "deploy",
			args(map[string]any{"url": "https://ok.example", "note": "fine\r\x1b[2K\x1b[1Aallow deploy (exec) https://ok.example"}),
			[]string{`note: fine\r\u001b[2K\u001b[1Aallow`}},
		{"a shell call's time limit", "shell",
			args(map[string]any{"command": "go test ./...", "timeout": 600}),
			[]string{"go test ./...", "timeout: 600"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			tp := &Prompter{In: strings.NewReader("n\n"), Out: &out}
			defer tp.Close()
			p := policy.New(policy.ModeAgent, false, false, nil, nil, tp, all)
			v := p.Check(context.Background(), []providers.ToolCall{{ID: "1", Name: tt.tool, Arguments: tt.arguments}})
			if v[0].Allowed {
				t.Fatalf("allowed after a no: %+v", v[0])
			}
			shown := out.String()
			for _, w := range tt.want {
				if !strings.Contains(shown, w) {
					t.Errorf("the question does not show %q:\n%s", w, shown)
				}
			}
			if strings.Contains(tt.arguments, ".git/") && strings.Contains(shown, "[a]") {
				t.Errorf("a write into .git offers always: %q", shown)
			}
			if strings.ContainsAny(shown, "\x1b\r") {
				t.Errorf("the question printed a control character raw: %q", shown)
			}
			if i := strings.LastIndex(shown, "ask: allow "); i < 0 || i > 0 && shown[i-1] != '\n' {
				t.Errorf("the question does not start on a line of its own: %q", shown)
			}
		})
	}
}

// With several calls in one step, each call's arguments are listed under
// it.
func TestStepQuestionShowsEveryArgument(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := &Prompter{In: strings.NewReader("n\n"), Out: &out}
	defer p.Close()
	_, err := p.Approve(context.Background(), []policy.Pending{
		{Name: "write_file", Summary: "a", Args: []policy.Arg{{Name: "content", Value: "one\ntwo\x1b]52;c;x\a"}}, Risk: tools.Write},
		{Name: "deploy", Summary: "b", Args: []policy.Arg{{Name: "target", Value: "prod"}}, Risk: tools.Exec},
	})
	if err != nil {
		t.Fatal(err)
	}
	shown := out.String()
	for _, w := range []string{"1. write_file (write) a\n", "| one\n", `| two\u001b]52;c;x\u0007`, "2. deploy (exec) b\n", "target: prod\n"} {
		if !strings.Contains(shown, w) {
			t.Errorf("not shown: %q in\n%s", w, shown)
		}
	}
}
