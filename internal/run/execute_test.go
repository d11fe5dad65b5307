package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// TestUsagePerStep checks the per-step usage in run.finished.
func TestUsagePerStep(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "read_file", `{"path":"a.txt"}`)}},
		fakeprovider.Reply{Text: "alpha"})
	defer srv.Close()
	w := newWorld(t, srv)
	os.WriteFile(filepath.Join(w.wd, "a.txt"), []byte("alpha\n"), 0o644)
	finished := w.ask("q").finished()
	if finished.Get("type").String() != "run.finished" {
		t.Fatalf("last event %s", finished.Raw)
	}
	steps := finished.Get("usage_per_step").Array()
	if len(steps) != 2 || steps[0].Get("step").Int() != 1 || steps[1].Get("step").Int() != 2 ||
		steps[1].Get("input_tokens").Int() != 100 || steps[1].Get("output_tokens").Int() != 20 || steps[1].Get("total_tokens").Int() != 120 {
		t.Errorf("usage_per_step = %s", finished.Get("usage_per_step").Raw)
	}
	if finished.Get("usage.total_tokens").Int() != 240 {
		t.Errorf("usage = %s", finished.Get("usage").Raw)
	}
}
