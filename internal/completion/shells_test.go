package completion

import (
	"strings"
	"testing"
)

func TestEveryShellHasAScript(t *testing.T) {
	t.Parallel()
	root := &Command{Name: "ask", Flags: []Flag{{Names: []string{"quiet", "q"}}}}
	for _, shell := range Shells() {
		script := For(shell)
		if script == nil {
			t.Errorf("%s: no script", shell)
			continue
		}
		if out := script(root); !strings.Contains(out, "quiet") {
			t.Errorf("%s: the script offers no --quiet:\n%s", shell, out)
		}
	}
	if For("powershell") != nil || For("") != nil {
		t.Error("a script for a shell there is none for")
	}
}
