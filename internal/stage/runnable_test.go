package stage

import (
	"encoding/json"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
)

func TestRunnable(t *testing.T) {
	t.Parallel()
	ok1 := providers.ToolCall{ID: "c1", Name: "read_file"}
	bad := providers.ToolCall{ID: "c2", Name: "bash", Unreadable: "the arguments are not JSON"}
	ok2 := providers.ToolCall{ID: "c3", Name: "search"}
	calls := []providers.ToolCall{ok1, bad, ok2}
	got := Runnable(calls)
	if len(got) != 2 || got[0].ID != "c1" || got[1].ID != "c3" {
		t.Errorf("Runnable = %+v, want c1 and c3", got)
	}
	if calls[1].ID != "c2" || len(calls) != 3 {
		t.Errorf("the reply's calls were changed: %+v", calls)
	}
	for _, none := range [][]providers.ToolCall{nil, {bad}} {
		b, _ := json.Marshal(Runnable(none))
		if string(b) != "[]" {
			t.Errorf("Runnable(%+v) prints %s, want []", none, b)
		}
	}
}
